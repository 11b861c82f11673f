module example.com/agentenv-go-plugin

go 1.22
