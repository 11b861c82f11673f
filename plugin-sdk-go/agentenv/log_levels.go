package agentenv

// The levels Host.Log takes: the levels of $/log, lowest first. Each is the level's name on the wire, so
// Host.Log("info", ...) is the same as Host.Log(LogInfo, ...).
const (
	// LogDebug is detail for someone chasing a problem.
	LogDebug = "debug"
	// LogInfo is what the plugin is doing.
	LogInfo = "info"
	// LogWarning is something that went wrong while the plugin carried on.
	LogWarning = "warning"
	// LogError is something that failed.
	LogError = "error"
)

// UnknownLogLevelError is what Host.Log returns for a level $/log does not take; nothing is sent.
type UnknownLogLevelError struct {
	// Level is the level given.
	Level string
}

func (e *UnknownLogLevelError) Error() string {
	return "'" + e.Level + "' is not a log level; $/log takes debug, info, warning or error"
}

// checkLogLevel is nil for one of the four levels, else an *UnknownLogLevelError.
func checkLogLevel(level string) error {
	switch level {
	case LogDebug, LogInfo, LogWarning, LogError:
		return nil
	}
	return &UnknownLogLevelError{Level: level}
}
