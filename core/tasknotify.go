package core

import (
	"context"
	"encoding/json"
	"fmt"
)

// publishTask hands a task's new state to the subscriptions/listen streams that asked for it
// (through the broadcaster, so streams on every replica get it): notifications/tasks with the
// complete DetailedTask, as tasks/get would answer at that moment.
func (s *Server) publishTask(t *Task) {
	b, err := marshal(wireTask(t, true))
	if err != nil {
		s.logError(fmt.Errorf("mcpkit: encoding the notification of task %s: %w", t.ID, err))
		return
	}
	if err := s.publish(context.Background(), Change{Method: TaskStatusChanged, TaskID: t.ID, Params: json.RawMessage(b)}); err != nil {
		s.logError(fmt.Errorf("mcpkit: publishing the notification of task %s: %w", t.ID, err))
	}
}
