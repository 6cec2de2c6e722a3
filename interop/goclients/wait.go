package main

import "time"

// timeAfter is how long one poll round waits for a notification.
func timeAfter() <-chan time.Time { return time.After(500 * time.Millisecond) }
