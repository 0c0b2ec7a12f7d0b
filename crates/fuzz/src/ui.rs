//! The harness of `perfbase ui`'s requests: a head as a browser, or anyone who reaches the
//! port, sends it, read with the server's caps and checked by its access rules.

/// The tokens a request head is made of.
pub(crate) const DICTIONARY: &[&str] = &[
    "GET ",
    "HEAD ",
    "POST ",
    " HTTP/1.1\r\n",
    "\r\n",
    "\n",
    "Host: ",
    "Host: 127.0.0.1:8080\r\n",
    "Host: localhost\r\n",
    "Host: evil.example\r\n",
    "Authorization: Bearer ",
    "Cookie: perfbase_ui=",
    "/runs?plan=",
    "/run/",
    "/compare/1/2?baseline=",
    "/plan/",
    "/live/",
    "?token=",
    "&",
    "=",
    "%",
    "%2",
    "%ff",
    "+",
    "[::1]",
    ":",
];

/// One request head; true when the server read it.
pub(crate) fn request(input: &[u8]) -> bool {
    perfbase::ui::fuzz_request(input)
}
