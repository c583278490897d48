// Package themes holds the colour palettes (built-in and user TOML files)
// from which the ui builds its styles.
package themes
