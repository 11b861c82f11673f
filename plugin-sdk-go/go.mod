module github.com/agent-env/agent-env/plugin-sdk-go

go 1.22
