module example.com/agentenv-go-kept-host

go 1.22

require github.com/agent-env/agent-env/plugin-sdk-go v0.0.0

// Built against the SDK in this repository.
replace github.com/agent-env/agent-env/plugin-sdk-go => ../../../../plugin-sdk-go
