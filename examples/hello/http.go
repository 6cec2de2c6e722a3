package main

import (
	"context"
	"errors"

	"github.com/mcpkit/mcpkit/core"
)

func serveHTTP(ctx context.Context, s *core.Server, addr string) error {
	return errors.New("HTTP serving arrives with the mcphttp package")
}
