package core

// publishTask hands a task's new state to the listen streams that asked for it.
func (s *Server) publishTask(t *Task) {}
