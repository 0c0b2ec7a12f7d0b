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

/// A credential beside a `{{…}}` is still a credential: the importers write it as a variable
/// (they used to keep any value holding `{{`, taking it for their own capture), and
/// `perfbase k8s` refuses a plan that writes one out, by the same rule (issue 47, items 3, 4).
#[test]
fn credentials_beside_a_template_are_neither_imported_nor_put_in_a_config_map() {
    let dir = tmp();
    let curl = "curl http://127.0.0.1:9/x?token=T0KEN9{{z}} \
                -H 'Authorization: Bearer SUPERSECRET{{x}}' -H 'X-Api-Key: APIK3Y{{y}}' \
                -H 'Content-Type: application/json' --data '{\"password\": \"PASSW0RD{{q}}\"}'";
    let (code, plan, err) = pb(dir.path(), &["import", "curl", curl]);
    assert_eq!(code, 0, "{err}");
    for secret in ["T0KEN9", "SUPERSECRET", "APIK3Y", "PASSW0RD"] {
        assert!(!plan.contains(secret), "{secret} imported:\n{plan}");
    }
    assert!(
        plan.contains("Bearer ${PERFBASE_IMPORT_AUTHORIZATION}"),
        "{plan}"
    );

    let written = [
        (
            "[workloads.w.headers]\nAuthorization = \"Bearer abc\"",
            "headers.Authorization",
        ),
        (
            "[workloads.w.headers]\nX-Api-Key = \"k1\"",
            "headers.X-Api-Key",
        ),
        (
            "[workloads.w]\nbody = '{\"user\": \"u\", \"password\": \"hunter2\"}'",
            "JSON member \"password\"",
        ),
    ];
    for (part, at) in written {
        let file = dir.path().join("k.toml");
        std::fs::write(&file, format!("[plan]\nname = \"k\"\n{part}\n")).unwrap();
        let args = [
            "k8s",
            file.to_str().unwrap(),
            "--agents",
            "2",
            "--image",
            "i",
        ];
        let (code, out, err) = pb(dir.path(), &[&args[..], &["--store-secret", "s"]].concat());
        assert_eq!(code, 2, "{part}: {out}{err}");
        assert!(
            err.contains(at) && err.contains("credential written out"),
            "{err}"
        );
        assert!(!out.contains("hunter2") && !err.contains("hunter2") && !err.contains("abc"));
    }
}
