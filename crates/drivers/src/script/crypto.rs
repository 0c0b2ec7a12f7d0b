//! Hashes, HMACs, random bytes, UUIDs, base64 and hex for signed requests, and CSV for data
//! files: natives on `__perfbase`, on ring (already built for TLS), base64 and csv.

use base64::Engine as _;
use ring::rand::{SecureRandom, SystemRandom};
use rquickjs::{Array, ArrayBuffer, Ctx, Exception, Function, Object, Result, TypedArray, Value};

/// The most random bytes one call gives.
const MAX_RANDOM: usize = 1 << 20;

pub(crate) fn install<'js>(ctx: &Ctx<'js>, pb: &Object<'js>) -> Result<()> {
    pb.set("digest", Function::new(ctx.clone(), digest)?)?;
    pb.set("hmac", Function::new(ctx.clone(), hmac)?)?;
    pb.set("randomBytes", Function::new(ctx.clone(), random_bytes)?)?;
    pb.set("uuid", Function::new(ctx.clone(), uuid)?)?;
    pb.set("b64encode", Function::new(ctx.clone(), b64encode)?)?;
    pb.set("b64decode", Function::new(ctx.clone(), b64decode)?)?;
    pb.set("hexEncode", Function::new(ctx.clone(), hex_encode)?)?;
    pb.set("csv", Function::new(ctx.clone(), csv)?)?;
    Ok(())
}

fn input(ctx: &Ctx<'_>, what: &str, v: &Value<'_>) -> Result<Vec<u8>> {
    bytes_of(v)?.ok_or_else(|| {
        Exception::throw_type(
            ctx,
            &format!("{what} must be a string, an ArrayBuffer or a Uint8Array"),
        )
    })
}

/// `bytes` as `encoding`: "hex", "base64", "base64url" or "binary" (an ArrayBuffer).
fn output<'js>(ctx: &Ctx<'js>, bytes: &[u8], encoding: &str) -> Result<Value<'js>> {
    let text = match encoding {
        "hex" => hex(bytes),
        "base64" => base64::engine::general_purpose::STANDARD.encode(bytes),
        "base64url" => base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes),
        "binary" => return Ok(ArrayBuffer::new_copy(ctx.clone(), bytes)?.into_value()),
        other => {
            return Err(Exception::throw_type(
                ctx,
                &format!("output encoding '{other}': use hex, base64, base64url or binary"),
            ))
        }
    };
    rquickjs::String::from_str(ctx.clone(), &text).map(|s| s.into_value())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

fn algorithm(ctx: &Ctx<'_>, name: &str) -> Result<&'static ring::digest::Algorithm> {
    Ok(match name {
        "sha1" => &ring::digest::SHA1_FOR_LEGACY_USE_ONLY,
        "sha256" => &ring::digest::SHA256,
        "sha384" => &ring::digest::SHA384,
        "sha512" => &ring::digest::SHA512,
        other => {
            return Err(Exception::throw_type(
                ctx,
                &format!("hash '{other}': use sha1, sha256, sha384 or sha512"),
            ))
        }
    })
}

fn digest<'js>(ctx: Ctx<'js>, alg: String, data: Value<'js>, enc: String) -> Result<Value<'js>> {
    let alg = algorithm(&ctx, &alg)?;
    let data = input(&ctx, "the data", &data)?;
    output(&ctx, ring::digest::digest(alg, &data).as_ref(), &enc)
}

fn hmac<'js>(
    ctx: Ctx<'js>,
    alg: String,
    key: Value<'js>,
    data: Value<'js>,
    enc: String,
) -> Result<Value<'js>> {
    let alg = match alg.as_str() {
        "sha1" => ring::hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
        "sha256" => ring::hmac::HMAC_SHA256,
        "sha384" => ring::hmac::HMAC_SHA384,
        "sha512" => ring::hmac::HMAC_SHA512,
        other => {
            return Err(Exception::throw_type(
                &ctx,
                &format!("HMAC hash '{other}': use sha1, sha256, sha384 or sha512"),
            ))
        }
    };
    let key = ring::hmac::Key::new(alg, &input(&ctx, "the key", &key)?);
    let data = input(&ctx, "the data", &data)?;
    output(&ctx, ring::hmac::sign(&key, &data).as_ref(), &enc)
}

fn random(ctx: &Ctx<'_>, buf: &mut [u8]) -> Result<()> {
    SystemRandom::new()
        .fill(buf)
        .map_err(|_| Exception::throw_internal(ctx, "the system's random source failed"))
}

fn random_bytes<'js>(ctx: Ctx<'js>, n: f64) -> Result<ArrayBuffer<'js>> {
    if !(0.0..=MAX_RANDOM as f64).contains(&n) {
        return Err(Exception::throw_range(
            &ctx,
            &format!("randomBytes({n}): from 0 to {MAX_RANDOM} bytes"),
        ));
    }
    let mut buf = vec![0u8; n as usize];
    random(&ctx, &mut buf)?;
    ArrayBuffer::new(ctx, buf)
}

/// A random (version 4) UUID.
fn uuid(ctx: Ctx<'_>) -> Result<String> {
    let mut b = [0u8; 16];
    random(&ctx, &mut b)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex(&b);
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

fn engine(ctx: &Ctx<'_>, variant: &str) -> Result<base64::engine::GeneralPurpose> {
    use base64::engine::general_purpose as gp;
    Ok(match variant {
        "std" => gp::STANDARD,
        "rawstd" => gp::STANDARD_NO_PAD,
        "url" => gp::URL_SAFE,
        "rawurl" => gp::URL_SAFE_NO_PAD,
        other => {
            return Err(Exception::throw_type(
                ctx,
                &format!("base64 variant '{other}': use std, rawstd, url or rawurl"),
            ))
        }
    })
}

fn b64encode<'js>(ctx: Ctx<'js>, data: Value<'js>, variant: String) -> Result<String> {
    let data = input(&ctx, "the data", &data)?;
    Ok(engine(&ctx, &variant)?.encode(data))
}

/// Decoded to an ArrayBuffer, or with format "s" to a string.
fn b64decode<'js>(
    ctx: Ctx<'js>,
    text: String,
    variant: String,
    format: String,
) -> Result<Value<'js>> {
    let bytes = engine(&ctx, &variant)?
        .decode(text.trim())
        .map_err(|e| Exception::throw_type(&ctx, &format!("b64decode: {e}")))?;
    if format == "s" {
        let s = String::from_utf8_lossy(&bytes);
        return rquickjs::String::from_str(ctx, &s).map(|s| s.into_value());
    }
    Ok(ArrayBuffer::new(ctx, bytes)?.into_value())
}

fn hex_encode<'js>(ctx: Ctx<'js>, data: Value<'js>) -> Result<String> {
    Ok(hex(&input(&ctx, "the data", &data)?))
}

/// CSV text as an array of objects keyed by the header row, or (without one) of arrays.
fn csv<'js>(ctx: Ctx<'js>, text: String, header: bool) -> Result<Array<'js>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(header)
        .flexible(false)
        .from_reader(text.as_bytes());
    let names: Vec<String> = if header {
        let h = reader
            .headers()
            .map_err(|e| Exception::throw_type(&ctx, &format!("CSV: {e}")))?;
        h.iter().map(str::to_string).collect()
    } else {
        Vec::new()
    };
    let rows = Array::new(ctx.clone())?;
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(|e| Exception::throw_type(&ctx, &format!("CSV: {e}")))?;
        let row: Value = if header {
            let o = Object::new(ctx.clone())?;
            for (k, v) in names.iter().zip(record.iter()) {
                o.set(k.as_str(), v)?;
            }
            o.into_value()
        } else {
            let a = Array::new(ctx.clone())?;
            for (j, v) in record.iter().enumerate() {
                a.set(j, v)?;
            }
            a.into_value()
        };
        rows.set(i, row)?;
    }
    Ok(rows)
}

/// The bytes of a string, an ArrayBuffer or a Uint8Array; None for other values.
pub(crate) fn bytes_of(v: &Value<'_>) -> Result<Option<Vec<u8>>> {
    if let Some(s) = v.as_string() {
        return Ok(Some(s.to_string()?.into_bytes()));
    }
    if let Some(b) = ArrayBuffer::from_value(v.clone()) {
        // SAFETY: copied at once; no script runs while the slice is held.
        return Ok(unsafe { b.as_bytes() }.map(<[u8]>::to_vec));
    }
    if let Ok(a) = TypedArray::<u8>::from_value(v.clone()) {
        // SAFETY: as above.
        return Ok(unsafe { a.as_bytes() }.map(<[u8]>::to_vec));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_is_lowercase_pairs() {
        assert_eq!(super::hex(&[0, 15, 16, 255]), "000f10ff");
    }
}
