module example.com/agentenv-go-plugin

go 1.22

require github.com/agent-env/agent-env/plugin-sdk-go v0.0.0

// Build against the SDK in this repository; a plugin of your own requires a published version instead.
replace github.com/agent-env/agent-env/plugin-sdk-go => ../../plugin-sdk-go
