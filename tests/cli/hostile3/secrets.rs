//! Credentials a journey captured never reach a check's failure message, whether captured in
//! set-up or in an iteration, and however long (issue 47, item 1: the message was cut to 40
//! characters before redaction, so a set-up token's first 40 leaked, and an iteration's whole).

use crate::common::*;

#[test]
fn a_captured_token_never_reaches_a_failure_message() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let text = format!(
        "[plan]\nname = \"leak\"\n[targets.api]\nurl = \"http://{}\"\n[workloads.j]\n\
         target = \"api\"\n\
         setup = [ {{ name = \"login\", method = \"POST\", path = \"/login\", \
           body = '{{\"user\":\"u\",\"password\":\"p\"}}', \
           capture = {{ token = {{ json = \"/access_token\" }} }} }} ]\n\
         steps = [\n\
           {{ name = \"again\", method = \"POST\", path = \"/login\", \
              body = '{{\"user\":\"v\",\"password\":\"p\"}}', \
              capture = {{ fresh = {{ json = \"/access_token\" }} }} }},\n\
           {{ name = \"create\", method = \"POST\", path = \"/items\", \
              headers = {{ Authorization = \"Bearer {{{{fresh}}}}\" }}, body = '{{\"name\":\"x\"}}', \
              check = {{ fresh_token = {{ json = \"/id\", equals = \"x{{{{fresh}}}}\" }} }} }},\n\
           {{ name = \"create again\", method = \"POST\", path = \"/items\", \
              headers = {{ Authorization = \"Bearer {{{{token}}}}\" }}, body = '{{\"name\":\"x\"}}', \
              check = {{ setup_token = {{ json = \"/id\", equals = \"{{{{token}}}}\" }} }} }},\n\
         ]\non_failure = \"continue\"\n[[scenarios]]\nname = \"s\"\nworkload = \"j\"\n\
         concurrency = 1\nrequests = 5\n",
        server.addr
    );
    let r = run_plan_with(dir.path(), &text, |_| {});
    let everything = format!("{}{}{}", r.json(), r.stdout(), r.stderr());
    // Both checks failed, with their messages kept; no token's start is in any of it.
    let samples = r.json()["error_samples"].to_string();
    assert!(
        samples.contains("/id is not the expected value"),
        "{samples}"
    );
    // The reference service's tokens all start so.
    assert!(!everything.contains("tok-"), "a token leaked: {everything}");
}
