module github.com/agent-env/agent-env/plugin-sdk-go/schematest

go 1.22

require (
	github.com/agent-env/agent-env/plugin-sdk-go v0.0.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
)

require golang.org/x/text v0.14.0 // indirect

replace github.com/agent-env/agent-env/plugin-sdk-go => ../
