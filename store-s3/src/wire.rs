//! Sending one signed S3 request with a blocking HTTP client, and turning S3's answers into store errors.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::time::Duration;

use ureq::http::{Method, Request, Response};
use ureq::{Agent, AsSendBody, Body, SendBody};

use agent_env_store::error::{StoreError, StoreResult};

use crate::retry::{
    after_attempts, attempts_of, verdict, waited_as_asked_note, with_retries, Attempts, Tried,
};
use crate::settings::{EndpointFrom, CLASS, TABLE};
use crate::stall::{Incoming, Transfer};

/// How long a signed request stays valid: it is signed right before it is sent.
pub const REQUEST_SIGNATURE_LIFETIME: Duration = Duration::from_secs(900);
/// How long connecting may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long each request of the connection check (`agent-env config check`) may take, answer and body
/// included, unless `timeout_seconds` is shorter: as long as the PostgreSQL store's check waits to
/// connect. A check is a few small requests, so a server that takes longer is as good as down; the
/// long `timeout_seconds` is for real transfers.
pub const CHECK_LIMIT: Duration = Duration::from_secs(10);

/// What a request sends.
pub enum Outgoing<'a> {
    /// These bytes.
    Bytes(&'a [u8]),
    /// `len` bytes read from a file from where it stands (sent with that Content-Length, never
    /// chunked); a retry rewinds it there and sends them again.
    File(&'a mut File, u64),
}

/// One HTTP client for one endpoint, its connections kept alive between calls.
pub struct Wire {
    agent: Agent,
    endpoint: String,
    bucket: String,
    /// Where the config file's reference read the bucket from, when it names it by one.
    bucket_read_from: Option<String>,
    timeout: Duration,
    /// Where the endpoint came from, for what a server that cannot be reached is told to check.
    endpoint_from: EndpointFrom,
    /// Whether requests are signed (credentials are configured), for what a refusal says.
    signed: bool,
}

/// Whether a refused request reads or writes the bucket: a write refused for want of access says the
/// credentials may not write, not that they are wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A listing, a GET or a HEAD.
    Read,
    /// A PUT, or a step of a multipart upload.
    Write,
}

impl Wire {
    /// A client for `endpoint` (which came from `endpoint_from`), whose errors name `bucket`;
    /// `signed` says whether requests carry credentials. Sending a request's headers, and waiting for the answer's once the body is sent,
    /// may each take `timeout`; so may each wait for a body's next bytes, either way, but a body's
    /// whole transfer has no limit, since its size has none.
    pub fn new(
        (endpoint, endpoint_from): (&str, EndpointFrom),
        bucket: &str,
        timeout: Duration,
        signed: bool,
    ) -> Wire {
        let agent: Agent = Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .timeout_send_request(Some(timeout))
            .timeout_recv_response(Some(timeout))
            .timeout_per_read(Some(timeout))
            .timeout_per_write(Some(timeout))
            .max_idle_connections_per_host(8)
            .build()
            .into();
        Wire {
            agent,
            endpoint: endpoint.to_string(),
            endpoint_from,
            bucket: bucket.to_string(),
            bucket_read_from: None,
            timeout,
            signed,
        }
    }

    /// The client, its errors naming `from` (`the environment variable S3_BUCKET`) as where the
    /// bucket was read from, when the config file names it by a reference.
    pub fn bucket_read_from(self, from: Option<String>) -> Wire {
        Wire {
            bucket_read_from: from,
            ..self
        }
    }

    /// Where a person changes the bucket, as messages name it: `[stores.object.config] bucket`, with
    /// where its reference read it from when it is one.
    fn bucket_place(&self) -> String {
        match &self.bucket_read_from {
            Some(from) => format!("{TABLE} bucket (read from {from})"),
            None => format!("{TABLE} bucket"),
        }
    }

    /// The server, as messages name it.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Where a person changes the endpoint, as messages name it (`[stores.object.config] endpoint`, or
    /// `$AWS_ENDPOINT_URL` when it came from there).
    pub fn endpoint_place(&self) -> String {
        self.endpoint_from.place()
    }

    /// Reading an answer's body; `what` says which (an object's URL, `a listing`).
    pub fn reading(&self, what: &str) -> Transfer {
        Transfer::reading(what, &self.endpoint, self.timeout)
    }

    /// An answer's body as a stream, its failures told as reading `what`.
    pub fn incoming(&self, response: Response<Body>, what: &str) -> Incoming {
        Incoming::new(response.into_body(), self.reading(what))
    }

    /// Sends one request without a body (a GET, HEAD or DELETE) to a presigned URL with the headers it
    /// was signed with; any HTTP status comes back as a response, only a failure to talk to the server
    /// is an error. A POST or PUT goes through [`Wire::send_body`], even with nothing to send: given no
    /// body, ureq sends them an empty chunked one, and S3 refuses `Transfer-Encoding: chunked` (501).
    /// An answer saying the server is briefly unable to take it, or a connection refused or cut
    /// before the answer, is sent again as [`crate::retry`] says.
    pub fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
    ) -> StoreResult<Response<Body>> {
        self.call(
            || {
                self.agent
                    .run(request(method.clone(), url, headers).body(())?)
            },
            None,
        )
    }

    /// Sends one request without a body once, whatever comes of it: for a caller that judges its own
    /// attempts, as a resumed read does (see `crate::resume`).
    pub fn send_once(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
    ) -> Result<Response<Body>, ureq::Error> {
        self.agent.run(request(method, url, headers).body(())?)
    }

    /// Sends one request with `body`, as [`Wire::send`] does; `target` names what the body is (an
    /// object, or a part of one) when the server stops taking it.
    pub fn send_body(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Outgoing<'_>,
        target: &str,
    ) -> StoreResult<Response<Body>> {
        let builder = || request(method.clone(), url, headers);
        match body {
            Outgoing::Bytes(bytes) => self.call(
                || {
                    let sent = builder()
                        .header("Content-Length", bytes.len().to_string())
                        .body(bytes)?;
                    self.agent.run(sent)
                },
                Some(target),
            ),
            Outgoing::File(file, len) => {
                let start = file
                    .stream_position()
                    .map_err(|e| StoreError::io(format!("reading the file for {target}"), &e))?;
                let mut first = true;
                self.call(
                    || {
                        if !std::mem::take(&mut first) {
                            file.seek(SeekFrom::Start(start))?;
                        }
                        let sent = builder()
                            .header("Content-Length", len.to_string())
                            .body(SendBody::from_reader(&mut *file))?;
                        self.agent.run(sent)
                    },
                    Some(target),
                )
            }
        }
    }

    /// Sends one request of the connection check, with `body` when it is a POST or PUT: the request,
    /// its answer and the answer's body must all be done within [`CHECK_LIMIT`] (or `timeout_seconds`,
    /// when shorter). A server that does not answer in time is told as not answering `what` (`a
    /// listing of the bucket 'team'`) within that limit. It is sent again as [`Wire::send`] is.
    pub fn send_checking(
        &self,
        method: Method,
        url: &str,
        body: Option<&[u8]>,
        what: &str,
    ) -> StoreResult<Response<Body>> {
        let limit = self.timeout.min(CHECK_LIMIT);
        let tried = with_retries(
            || {
                let builder = request(method.clone(), url, &[]);
                match body {
                    Some(bytes) => self.limited(
                        builder
                            .header("Content-Length", bytes.len().to_string())
                            .body(bytes)?,
                        limit,
                    ),
                    None => self.limited(builder.body(())?, limit),
                }
            },
            verdict,
        );
        let attempts = tried.attempts;
        noting_attempts(tried).map_err(|e| match e {
            ureq::Error::Timeout(_) => self.check_unanswered(what, limit, attempts),
            other => self.unreachable(&other, attempts),
        })
    }

    /// Runs `request`, all of it (the answer's body too) within `limit`.
    fn limited(
        &self,
        request: Request<impl AsSendBody>,
        limit: Duration,
    ) -> Result<Response<Body>, ureq::Error> {
        let request = self
            .agent
            .configure_request(request)
            .timeout_global(Some(limit))
            .build();
        self.agent.run(request)
    }

    /// The error of a check's request that got no answer within `limit`, at the last of `attempts`.
    fn check_unanswered(&self, what: &str, limit: Duration, attempts: u32) -> StoreError {
        StoreError::Io {
            message: format!(
                "{CLASS}: {} did not answer {what} within {} s{}; check that the server is running and not paused or overloaded, and that {} names an S3 server",
                self.endpoint,
                limit.as_secs(),
                after_attempts(attempts),
                self.endpoint_place()
            ),
            raw_os_error: None,
        }
    }

    /// Runs one request, made and sent by `attempt`, as many times as [`crate::retry`] says;
    /// `uploading` names the body it sends, if it sends one.
    fn call(
        &self,
        attempt: impl FnMut() -> Result<Response<Body>, ureq::Error>,
        uploading: Option<&str>,
    ) -> StoreResult<Response<Body>> {
        let tried = with_retries(attempt, verdict);
        let attempts = tried.attempts;
        noting_attempts(tried).map_err(|e| match (&e, uploading) {
            // Only a body's transfer writes long enough to meet the per-write bound: the headers'
            // own bound is shorter by the time they are sent.
            (ureq::Error::Timeout(ureq::Timeout::PerWrite), Some(target)) => {
                Transfer::writing(target, &self.endpoint, self.timeout).stalled()
            }
            _ => self.failed_call(&e, attempts),
        })
    }

    /// A request that got no answer at the last of `attempts`: the server could not be reached, or
    /// did not answer in time.
    pub fn failed_call(&self, err: &ureq::Error, attempts: u32) -> StoreError {
        match err {
            ureq::Error::Timeout(
                ureq::Timeout::SendRequest
                | ureq::Timeout::RecvResponse
                | ureq::Timeout::PerRead
                | ureq::Timeout::PerWrite,
            ) => StoreError::Io {
                message: format!(
                    "{CLASS}: {} did not answer within {} s{}; check that the server is running and not paused or overloaded, and that {} names an S3 server (timeout_seconds sets how long to wait)",
                    self.endpoint,
                    self.timeout.as_secs(),
                    after_attempts(attempts),
                    self.endpoint_place()
                ),
                raw_os_error: None,
            },
            other => self.unreachable(other, attempts),
        }
    }

    /// A request that could not reach the server, at the last of `attempts`.
    fn unreachable(&self, err: &dyn std::fmt::Display, attempts: u32) -> StoreError {
        let said = err.to_string();
        StoreError::Io {
            message: format!(
                "{CLASS} could not reach {}{} ({said}); {}",
                self.endpoint,
                after_attempts(attempts),
                what_to_check(&self.endpoint, &self.endpoint_from, &said)
            ),
            raw_os_error: None,
        }
    }

    /// The store error for an S3 error answer to `what` (an operation on `target`) that reads.
    pub fn failure(&self, response: Response<Body>, what: &str, target: &str) -> StoreError {
        self.refusal(response, what, target, Access::Read)
    }

    /// The store error for an S3 error answer to `what` (an operation on `target`) that writes: one
    /// refused for want of access says that the credentials may not write to the bucket.
    pub fn write_failure(&self, response: Response<Body>, what: &str, target: &str) -> StoreError {
        self.refusal(response, what, target, Access::Write)
    }

    /// What credentials that may not write to the bucket are told to do.
    fn may_not_write(&self) -> String {
        if self.signed {
            format!(
                "these credentials may not write to the bucket '{}'; {GIVE_WRITE_ACCESS}",
                self.bucket
            )
        } else {
            format!(
                "requests without credentials may not write to the bucket '{}'; {SET_WRITING_CREDENTIALS}",
                self.bucket
            )
        }
    }

    /// The store error for an S3 error answer to `what` on `target`, a read or a write.
    fn refusal(
        &self,
        response: Response<Body>,
        what: &str,
        target: &str,
        access: Access,
    ) -> StoreError {
        self.told(&Answer::read(response), what, target, access)
    }

    /// The store error for `answer`, an S3 error answer to `what` on `target`.
    pub fn told(&self, answer: &Answer, what: &str, target: &str, access: Access) -> StoreError {
        let said = &answer.said;
        // Only an answer that was worth another attempt comes after several.
        let after = after_attempts(answer.attempts);
        let waited = waited_as_asked_note(answer.waited_as_asked);
        match (answer.status, answer.code.as_str()) {
            (_, "NoSuchBucket") => StoreError::Config(format!(
                "{CLASS}: the bucket '{}' does not exist at {}; create it, or set {} to one that does",
                self.bucket,
                self.endpoint,
                self.bucket_place()
            )),
            _ if answer.denied() && access == Access::Write => StoreError::Config(format!(
                "{CLASS}: {} refused to {what} {target} ({said}): {}",
                self.endpoint,
                self.may_not_write()
            )),
            (403, _) | (_, "InvalidAccessKeyId" | "SignatureDoesNotMatch" | "AccessDenied")
                if !self.signed =>
            {
                StoreError::Config(format!(
                    "{CLASS}: {} refused to {what} {target} ({said}); no credentials are set, so the requests went unsigned; set access_key_id and secret_access_key in {TABLE} (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) to credentials that may use the bucket '{}'",
                    self.endpoint, self.bucket
                ))
            }
            (403, _) | (_, "InvalidAccessKeyId" | "SignatureDoesNotMatch" | "AccessDenied") => {
                StoreError::Config(format!(
                    "{CLASS}: {} refused to {what} {target} ({said}); check the credentials (access_key_id and secret_access_key in {TABLE}, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) and that they may use the bucket '{}'",
                    self.endpoint, self.bucket
                ))
            }
            (404, _) => StoreError::object_not_found(target),
            (412, _) | (409, "ConditionalRequestConflict") if answer.attempts > 1 => {
                StoreError::AlreadyExists(format!(
                    "Object already exists at {target}: found by attempt {} of this write, so an earlier attempt the server failed to answer may have written it.",
                    answer.attempts
                ))
            }
            (412, _) | (409, "ConditionalRequestConflict") => StoreError::object_exists(target),
            (429 | 500..=599, _) => StoreError::Io {
                message: format!(
                    "{CLASS}: {} failed to {what} {target}{after} ({said}): {}{waited}",
                    self.endpoint,
                    server_failing(answer.status, &self.endpoint_place())
                ),
                raw_os_error: None,
            },
            _ => StoreError::Io {
                message: format!(
                    "{CLASS}: {} failed to {what} {target}{after} ({said}){waited}",
                    self.endpoint
                ),
                raw_os_error: None,
            },
        }
    }
}

/// The last attempt's outcome, an answer noting how many attempts it took.
fn noting_attempts(
    tried: Tried<Result<Response<Body>, ureq::Error>>,
) -> Result<Response<Body>, ureq::Error> {
    tried.outcome.map(|mut response| {
        response.extensions_mut().insert(Attempts {
            count: tried.attempts,
            waited_as_asked: tried.waited_as_asked,
        });
        response
    })
}

/// What an answer of HTTP `status` (429: the server throttles its callers; 500 to 599: the server, or
/// a proxy in front of it, failed on its side) is told to do; `place` is where the endpoint is set
/// (`[stores.object.config] endpoint`).
fn server_failing(status: u16, place: &str) -> String {
    match status {
        429 => "the server is slowing its callers down (too many requests); try again in a moment, and if it goes on, \
                send it fewer requests at once (fewer runs or uploads at the same time) or ask whoever runs it to raise \
                its rate limit"
            .to_string(),
        502 | 504 => format!(
            "a gateway in front of the server answered for it, as the S3 server behind it is down or did not answer in time; check that it is running and what its logs say, and that {place} names an S3 server, then try again"
        ),
        503 => format!(
            "the server is unavailable or overloaded (S3 says so to slow its callers down); try again in a moment, and if it goes on, check that it is running and what its logs say, and that {place} names an S3 server"
        ),
        _ => format!(
            "the server failed on its side; try again, and if it goes on, check what its logs say, and that {place} names an S3 server"
        ),
    }
}

/// What credentials that may not write are told to do.
pub const GIVE_WRITE_ACCESS: &str = "give them write access to it (s3:PutObject, and s3:AbortMultipartUpload to call off a failed upload), or set access_key_id and secret_access_key in [stores.object.config] to credentials that may write";
/// What requests without credentials, refused a write, are told to do.
pub const SET_WRITING_CREDENTIALS: &str = "set access_key_id and secret_access_key in [stores.object.config] (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) to credentials that may write to it";

/// An S3 error answer, as a message quotes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// S3's error code (`AccessDenied`), empty when the answer had none.
    pub code: String,
    /// `Code: Message`, or the code alone, or `HTTP <status>`.
    pub said: String,
    /// How many times the request was sent (more than once for an answer worth another attempt).
    pub attempts: u32,
    /// How long, in all, the pauses between attempts were that the server's `Retry-After` set.
    pub waited_as_asked: Duration,
}

impl Answer {
    /// Reads the error answer's status and body.
    pub fn read(mut response: Response<Body>) -> Answer {
        let status = response.status().as_u16();
        let Attempts {
            count: attempts,
            waited_as_asked,
        } = attempts_of(&response);
        let text = response
            .body_mut()
            .with_config()
            .limit(64 * 1024)
            .read_to_string()
            .unwrap_or_default();
        let code = xml_field(&text, "Code").unwrap_or_default();
        // Quoted mid-sentence: without the full stop some servers end it with ("Access Denied.").
        let message = xml_field(&text, "Message").unwrap_or_default();
        let message = message.trim().trim_end_matches('.').to_string();
        let said = match (code.is_empty(), message.is_empty()) {
            (false, false) => format!("{code}: {message}"),
            (false, true) => code.clone(),
            _ => format!("HTTP {status}"),
        };
        Answer {
            status,
            code,
            said,
            attempts,
            waited_as_asked,
        }
    }

    /// Whether the request was refused for want of access (not for wrong credentials).
    pub fn denied(&self) -> bool {
        self.code == "AccessDenied" || (self.status == 403 && self.code.is_empty())
    }
}

/// A request to `url` with these headers, its body still to come.
fn request(method: Method, url: &str, headers: &[(&str, &str)]) -> ureq::http::request::Builder {
    headers.iter().fold(
        Request::builder().method(method).uri(url),
        |builder, (name, value)| builder.header(*name, *value),
    )
}

/// The text of the first `<name>…</name>` element of an XML answer.
pub fn xml_field(xml: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&close)? + start;
    Some(unescape_xml(&xml[start..end]))
}

fn unescape_xml(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// A response header as text.
pub fn header(response: &Response<Body>, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// What to check when `endpoint` (which came from `from`) could not be reached with the error
/// `said`: an https endpoint whose server answered in plain HTTP (TLS reads it as a corrupt record)
/// is told to use http; the place named is where the endpoint came from.
fn what_to_check(endpoint: &str, from: &EndpointFrom, said: &str) -> String {
    let plain_http_answer = said.contains("InvalidContentType") || said.contains("corrupt message");
    if endpoint.starts_with("https://") && plain_http_answer {
        return format!(
            "the server answered in plain HTTP, not TLS: write the endpoint with http:// in {}",
            from.place()
        );
    }
    match from {
        EndpointFrom::Config | EndpointFrom::Reference(_) => format!(
            "check that the server is running and that {} names it",
            from.place()
        ),
        EndpointFrom::Variable(variable) => format!(
            "the endpoint comes from ${variable}, as {TABLE} sets none; check that the server is running and that ${variable} names it"
        ),
        EndpointFrom::Default => format!("that is AWS's own endpoint for the region, as neither {TABLE} endpoint nor $AWS_ENDPOINT_URL names a server; check the network, or name an S3-compatible server in {TABLE} endpoint"),
    }
}

#[cfg(test)]
mod tests {
    use super::{what_to_check, xml_field, Access, Answer, EndpointFrom, Method, Wire};
    use std::time::Duration;

    const CONFIG: EndpointFrom = EndpointFrom::Config;
    const VARIABLE: EndpointFrom = EndpointFrom::Variable("AWS_ENDPOINT_URL");

    #[test]
    fn an_https_endpoint_answered_in_plain_http_is_told_to_use_http() {
        let tls_said = "io: received corrupt message of type InvalidContentType";
        assert!(what_to_check("https://127.0.0.1:9000", &CONFIG, tls_said)
            .contains("write the endpoint with http:// in [stores.object.config] endpoint"));
        assert!(what_to_check("https://127.0.0.1:9000", &VARIABLE, tls_said)
            .contains("write the endpoint with http:// in $AWS_ENDPOINT_URL"));
        assert!(what_to_check("http://127.0.0.1:9000", &CONFIG, tls_said)
            .starts_with("check that the server"));
        assert!(
            what_to_check("https://s3.example", &CONFIG, "Connection refused")
                .starts_with("check that the server")
        );
    }

    /// A server that cannot be reached is blamed on the place its endpoint came from: an AWS
    /// variable is named as such, not the config file that sets no endpoint.
    #[test]
    fn an_unreachable_endpoint_names_where_it_came_from() {
        let refused = "io: Connection refused";
        assert_eq!(
            what_to_check("http://127.0.0.1:2", &CONFIG, refused),
            "check that the server is running and that [stores.object.config] endpoint names it"
        );
        assert_eq!(
            what_to_check("http://127.0.0.1:2", &VARIABLE, refused),
            "the endpoint comes from $AWS_ENDPOINT_URL, as [stores.object.config] sets none; check that the server is running and that $AWS_ENDPOINT_URL names it"
        );
        assert!(what_to_check(
            "https://s3.us-east-1.amazonaws.com",
            &EndpointFrom::Default,
            refused
        )
        .starts_with("that is AWS's own endpoint for the region"));
        // Through a real refused connection, tried again as a server restarting would want.
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let endpoint = format!("http://127.0.0.1:{port}");
        let wire = Wire::new((&endpoint, VARIABLE), "b", Duration::from_secs(5), false);
        let err = wire
            .send(Method::GET, &format!("{endpoint}/b"), &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!(
                "S3ObjectStore could not reach {endpoint} after 4 attempts ("
            ))
                && err.ends_with("; the endpoint comes from $AWS_ENDPOINT_URL, as [stores.object.config] sets none; check that the server is running and that $AWS_ENDPOINT_URL names it"),
            "{err}"
        );
    }

    /// An endpoint or a bucket the config file names by a reference is blamed on where it was read
    /// from, the place to fix it, as the PostgreSQL store names its dsn's.
    #[test]
    fn an_endpoint_or_bucket_read_through_a_reference_names_where_it_came_from() {
        let from = EndpointFrom::Reference("the environment variable S3_ENDPOINT".into());
        assert_eq!(
            what_to_check("http://127.0.0.1:1", &from, "io: Connection refused"),
            "check that the server is running and that [stores.object.config] endpoint (read from the environment variable S3_ENDPOINT) names it"
        );
        let tls_said = "io: received corrupt message of type InvalidContentType";
        assert!(what_to_check("https://127.0.0.1:9000", &from, tls_said).ends_with(
            "write the endpoint with http:// in [stores.object.config] endpoint (read from the environment variable S3_ENDPOINT)"
        ));
        let missing = Answer {
            status: 404,
            code: "NoSuchBucket".into(),
            said: "NoSuchBucket".into(),
            attempts: 1,
            waited_as_asked: Duration::ZERO,
        };
        let told = |wire: Wire| {
            wire.told(&missing, "list", "s3://team/", Access::Read)
                .to_string()
        };
        let wire = || Wire::new(("http://h:1", CONFIG), "team", Duration::from_secs(5), true);
        assert_eq!(
            told(wire()),
            "S3ObjectStore: the bucket 'team' does not exist at http://h:1; create it, or set [stores.object.config] bucket to one that does"
        );
        assert_eq!(
            told(wire().bucket_read_from(Some("the environment variable S3_BUCKET".into()))),
            "S3ObjectStore: the bucket 'team' does not exist at http://h:1; create it, or set [stores.object.config] bucket (read from the environment variable S3_BUCKET) to one that does"
        );
    }

    /// Refused requests that carried no credentials say none are set, not that the credentials
    /// are wrong.
    #[test]
    fn a_refusal_of_unsigned_requests_says_no_credentials_are_set() {
        let denied = Answer {
            status: 403,
            code: "AccessDenied".into(),
            said: "AccessDenied: Access Denied".into(),
            attempts: 1,
            waited_as_asked: Duration::ZERO,
        };
        let refusal = |signed: bool| {
            Wire::new(
                ("http://h:1", CONFIG),
                "team",
                Duration::from_secs(5),
                signed,
            )
            .told(&denied, "list", "s3://team/", Access::Read)
            .to_string()
        };
        let unsigned = refusal(false);
        assert_eq!(
            unsigned,
            "S3ObjectStore: http://h:1 refused to list s3://team/ (AccessDenied: Access Denied); no credentials are set, so the requests went unsigned; set access_key_id and secret_access_key in [stores.object.config] (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) to credentials that may use the bucket 'team'"
        );
        assert!(refusal(true).contains("; check the credentials ("));
    }

    /// An answer of 500 to 599 is the server failing (or a proxy in front of one that is down): the
    /// message says so and what to do, rather than the bare status.
    #[test]
    fn a_server_error_answer_says_the_server_is_failing_and_what_to_do() {
        let wire = Wire::new(("http://h:1", CONFIG), "b", Duration::from_secs(5), true);
        let told = |status: u16| {
            let answer = Answer {
                status,
                code: String::new(),
                said: format!("HTTP {status}"),
                attempts: 1,
                waited_as_asked: Duration::ZERO,
            };
            wire.told(&answer, "list", "s3://b", Access::Read)
                .to_string()
        };
        assert_eq!(
            told(503),
            "S3ObjectStore: http://h:1 failed to list s3://b (HTTP 503): the server is unavailable or overloaded (S3 says so to slow its callers down); try again in a moment, and if it goes on, check that it is running and what its logs say, and that [stores.object.config] endpoint names an S3 server"
        );
        for gateway in [502, 504] {
            assert!(
                told(gateway).ends_with(&format!("(HTTP {gateway}): a gateway in front of the server answered for it, as the S3 server behind it is down or did not answer in time; check that it is running and what its logs say, and that [stores.object.config] endpoint names an S3 server, then try again")),
                "{gateway}"
            );
        }
        // A server throttling with 429, as some S3-compatible ones do, is told what S3's 503 is.
        assert!(told(429).ends_with("(HTTP 429): the server is slowing its callers down (too many requests); try again in a moment, and if it goes on, send it fewer requests at once (fewer runs or uploads at the same time) or ask whoever runs it to raise its rate limit"), "{}", told(429));
        assert!(told(500).ends_with("(HTTP 500): the server failed on its side; try again, and if it goes on, check what its logs say, and that [stores.object.config] endpoint names an S3 server"));
        // A status that is no server failure keeps the plain sentence.
        assert_eq!(
            told(400),
            "S3ObjectStore: http://h:1 failed to list s3://b (HTTP 400)"
        );
        let from_variable = Wire::new(("http://h:1", VARIABLE), "b", Duration::from_secs(5), true)
            .told(
                &Answer {
                    status: 503,
                    code: "SlowDown".into(),
                    said: "SlowDown: Please reduce your request rate".into(),
                    attempts: 1,
                    waited_as_asked: Duration::ZERO,
                },
                "list",
                "s3://b",
                Access::Read,
            )
            .to_string();
        assert!(
            from_variable.ends_with("that $AWS_ENDPOINT_URL names an S3 server"),
            "{from_variable}"
        );
    }

    #[test]
    fn error_fields_are_read_from_s3_answers() {
        let xml = "<Error><Code>NoSuchKey</Code><Message>a &amp; b</Message></Error>";
        assert_eq!(xml_field(xml, "Code").as_deref(), Some("NoSuchKey"));
        assert_eq!(xml_field(xml, "Message").as_deref(), Some("a & b"));
        assert_eq!(xml_field(xml, "Key"), None);
    }
}
