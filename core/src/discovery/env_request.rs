//! What of the user's environment a plugin's manifest asks for (`[plugin] env`), in words a person
//! judges before trusting it: every other variable beyond the pass-through list is withheld, so the
//! list is what the plugin can read of the user's keys and tokens.

/// A prefix pattern this short (`A*`) lets through more than any plugin needs.
const BROAD_PREFIX_CHARS: usize = 3;

/// `asks for OPENAI_API_KEY, AWS_* …`, with the patterns that are broad said so; `None` when the
/// manifest asks for nothing.
pub fn env_request(env: &[String]) -> Option<String> {
    if env.is_empty() {
        return None;
    }
    let broad: Vec<String> = env
        .iter()
        .filter_map(|p| p.strip_suffix('*'))
        .filter(|prefix| prefix.chars().count() < BROAD_PREFIX_CHARS)
        .map(|prefix| format!("'{prefix}*'"))
        .collect();
    let mut sentence = format!(
        "asks for the environment variables {} beside the pass-through list",
        env.join(", ")
    );
    if !broad.is_empty() {
        sentence.push_str(&format!(
            "; {} {} broad: every variable whose name starts so, API keys and tokens included",
            broad.join(", "),
            if broad.len() == 1 { "is" } else { "are" }
        ));
    }
    Some(sentence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrow_list_is_named_and_a_broad_prefix_is_said() {
        assert_eq!(env_request(&[]), None);
        let said = env_request(&["OPENAI_API_KEY".into(), "AWS_*".into()]).unwrap();
        assert_eq!(
            said,
            "asks for the environment variables OPENAI_API_KEY, AWS_* beside the pass-through list"
        );
        let broad = env_request(&["A*".into(), "GITHUB_TOKEN".into()]).unwrap();
        assert!(broad.ends_with("; 'A*' is broad: every variable whose name starts so, API keys and tokens included"), "{broad}");
    }
}
