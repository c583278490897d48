package actions

import (
	"context"
	"errors"

	"github.com/dispatchtop/dispatchtop/model"
)

func (e *Engine) kill(ctx context.Context, req Request, snap *model.Snapshot, n *model.Node) (Result, error) {
	return Result{}, errors.New("kill: in progress")
}
func (e *Engine) resume(ctx context.Context, req Request, n *model.Node) (Result, error) {
	return Result{}, errors.New("resume: in progress")
}
func (e *Engine) compactNode(ctx context.Context, req Request, n *model.Node) (Result, error) {
	return Result{}, errors.New("compact: in progress")
}
func (e *Engine) compactAll(ctx context.Context, req Request) (Result, error) {
	return Result{}, errors.New("compact: in progress")
}
func (e *Engine) merge(ctx context.Context, req Request, n *model.Node) (Result, error) {
	return Result{}, errors.New("merge: in progress")
}
