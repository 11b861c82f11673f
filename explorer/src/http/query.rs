//! A query string read by hand: every key may repeat (`?type=a&type=b`), and a value that does not
//! validate is a 422 naming the parameter, as FastAPI answers.

use super::percent::decode;
use super::problem::{ApiError, ApiResult};

/// The decoded pairs of one query string, in order.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    /// Parses `raw` (the part after `?`, or none).
    pub fn parse(raw: Option<&str>) -> ApiResult<Query> {
        let mut pairs = Vec::new();
        for part in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            let key = decode(key, true)
                .map_err(|_| ApiError::bad_request("the query string is not valid UTF-8"))?;
            let value = decode(value, true).map_err(|_| {
                ApiError::invalid(
                    &["query", &key],
                    "the value is not valid UTF-8",
                    "value_error",
                )
            })?;
            pairs.push((key, value));
        }
        Ok(Query { pairs })
    }

    /// The last value of `key` (as FastAPI takes a scalar given twice).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`, in order.
    pub fn all(&self, key: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// A required string parameter.
    pub fn required(&self, key: &str) -> ApiResult<&str> {
        self.get(key)
            .ok_or_else(|| ApiError::invalid(&["query", key], "Field required", "missing"))
    }

    /// An integer parameter within `min..=max`, else `default`.
    pub fn int(&self, key: &str, default: i64, min: i64, max: Option<i64>) -> ApiResult<i64> {
        let Some(text) = self.get(key) else {
            return Ok(default);
        };
        let n: i64 = text.trim().parse().map_err(|_| {
            ApiError::invalid(
                &["query", key],
                "Input should be a valid integer, unable to parse string as an integer",
                "int_parsing",
            )
        })?;
        if n < min {
            return Err(ApiError::invalid(
                &["query", key],
                format!("Input should be greater than or equal to {min}"),
                "greater_than_equal",
            ));
        }
        if let Some(max) = max.filter(|max| n > *max) {
            return Err(ApiError::invalid(
                &["query", key],
                format!("Input should be less than or equal to {max}"),
                "less_than_equal",
            ));
        }
        Ok(n)
    }

    /// An optional integer parameter of at least `min`.
    pub fn opt_int(&self, key: &str, min: i64) -> ApiResult<Option<i64>> {
        match self.get(key) {
            None => Ok(None),
            Some(_) => self.int(key, min, min, None).map(Some),
        }
    }

    /// A boolean parameter (`true/false`, `1/0`, `yes/no`, `on/off`, as pydantic reads them).
    pub fn bool(&self, key: &str, default: bool) -> ApiResult<bool> {
        let Some(text) = self.get(key) else {
            return Ok(default);
        };
        match text.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" | "t" | "y" => Ok(true),
            "false" | "0" | "no" | "off" | "f" | "n" => Ok(false),
            _ => Err(ApiError::invalid(
                &["query", key],
                "Input should be a valid boolean, unable to interpret input",
                "bool_parsing",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[test]
    fn keys_repeat_and_values_decode() {
        let q = Query::parse(Some("type=a&type=b%2Fc&id=x+y&limit=")).unwrap();
        assert_eq!(q.all("type"), vec!["a", "b/c"]);
        assert_eq!(q.get("id"), Some("x y"));
        assert_eq!(q.get("missing"), None);
    }

    #[test]
    fn integers_are_checked_against_their_bounds() {
        let q = Query::parse(Some("limit=501&offset=-1&x=abc")).unwrap();
        let e = q.int("limit", 50, 1, Some(500)).unwrap_err();
        assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(e.detail[0]["loc"][1], "limit");
        assert!(q.int("offset", 0, 0, None).is_err());
        assert!(q.int("x", 0, 0, None).is_err());
        assert_eq!(q.int("absent", 7, 0, None).unwrap(), 7);
    }

    #[test]
    fn booleans_read_as_pydantic_reads_them() {
        let q = Query::parse(Some("a=false&b=1&c=maybe")).unwrap();
        assert!(!q.bool("a", true).unwrap());
        assert!(q.bool("b", false).unwrap());
        assert!(q.bool("c", false).is_err());
        assert!(q.bool("d", true).unwrap());
    }
}
