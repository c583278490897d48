package storefixtures

// OpencodeDDL is OpenCode's database as drizzle creates its `session`
// table from SessionTable (anomalyco/opencode
// packages/opencode/src/session/session.sql.ts, with the Timestamps of
// src/storage/schema.sql.ts, at the commit docs/sources.md names); the
// `project` table it references is cut to its key. OpenCode opens the
// database in WAL mode.
var OpencodeDDL = []string{
	`PRAGMA journal_mode=WAL`,
	"CREATE TABLE `project` (`id` text PRIMARY KEY NOT NULL)",
	"CREATE TABLE `session` (\n" +
		"\t`id` text PRIMARY KEY NOT NULL,\n" +
		"\t`project_id` text NOT NULL,\n" +
		"\t`workspace_id` text,\n" +
		"\t`parent_id` text,\n" +
		"\t`slug` text NOT NULL,\n" +
		"\t`directory` text NOT NULL,\n" +
		"\t`path` text,\n" +
		"\t`title` text NOT NULL,\n" +
		"\t`version` text NOT NULL,\n" +
		"\t`share_url` text,\n" +
		"\t`summary_additions` integer,\n" +
		"\t`summary_deletions` integer,\n" +
		"\t`summary_files` integer,\n" +
		"\t`summary_diffs` text,\n" +
		"\t`cost` real DEFAULT 0 NOT NULL,\n" +
		"\t`revert` text,\n" +
		"\t`permission` text,\n" +
		"\t`agent` text,\n" +
		"\t`model` text,\n" +
		"\t`time_created` integer NOT NULL,\n" +
		"\t`time_updated` integer NOT NULL,\n" +
		"\t`time_compacting` integer,\n" +
		"\t`time_archived` integer,\n" +
		"\tFOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON UPDATE no action ON DELETE cascade\n" +
		")",
	"CREATE INDEX `session_project_idx` ON `session` (`project_id`)",
	"CREATE INDEX `session_parent_idx` ON `session` (`parent_id`)",
}
