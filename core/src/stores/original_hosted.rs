//! The Python agent-env's hosted store classes this agent-env does not have, each with what to use
//! instead: said where an impl names one, so a config written for the original gets its way forward.

/// Where a PostgreSQL document store is the way forward.
const USE_POSTGRES: &str = "use PostgresDocumentStore, agent-env's built-in shared document store (impl = \"PostgresDocumentStore\" with config = { dsn = \"postgresql://…\" }), or a plugin's document store, named \"<package>:<Class>\"";
/// Where S3ObjectStore is.
const USE_S3: &str = "use S3ObjectStore, which reaches Amazon S3 or any S3-compatible server (its config's endpoint), or a plugin's object store, named \"<package>:<Class>\"";
/// Where a secrets manager is reached by a plugin.
const USE_SECRET_PLUGIN: &str = "read that secrets manager from a plugin's secret store (`agent-env plugin new NAME --kind store --store secret` writes one to start from), named impl = \"<package>:<Class>\"; or hand the secrets over as environment variables, which LocalSecretStore reads first";
/// Where a hosted registry is reached by a plugin.
const USE_IMAGE_PLUGIN: &str = "reach that registry from a plugin's image store (a subclass of the SDK's ImageStore under `@plugin.store`), named impl = \"<package>:<Class>\"; LocalRegistryImageStore talks only to a registry that needs no login";

/// What to use instead of `class` when it is one of the original's hosted store classes.
pub fn advice(class: &str) -> Option<&'static str> {
    Some(match class {
        "MongoDocumentStore" | "FirestoreMongoDocumentStore" | "DynamoDbDocumentStore" => {
            USE_POSTGRES
        }
        "GcsObjectStore" => USE_S3,
        "AwsSecretsManagerSecretStore" | "GcpSecretManagerSecretStore" => USE_SECRET_PLUGIN,
        "OciRegistryImageStore" | "EcrImageStore" => USE_IMAGE_PLUGIN,
        _ => return None,
    })
}

/// The sentence for an impl naming one of the original's hosted classes (`None` for another class).
pub fn refusal(impl_name: &str, class: &str) -> Option<String> {
    advice(class).map(|advice| {
        format!(
            "Cannot import impl '{impl_name}': {class} is a store of the Python agent-env that this one does not have; {advice}"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_hosted_class_of_the_original_has_advice() {
        for class in [
            "OciRegistryImageStore",
            "EcrImageStore",
            "AwsSecretsManagerSecretStore",
            "GcpSecretManagerSecretStore",
            "DynamoDbDocumentStore",
            "FirestoreMongoDocumentStore",
            "MongoDocumentStore",
            "GcsObjectStore",
        ] {
            assert!(advice(class).is_some(), "{class}");
        }
        assert!(advice("S3ObjectStore").is_none());
        assert!(advice("DemoSecrets").is_none());
    }
}
