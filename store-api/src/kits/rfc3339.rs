//! A strict check of an RFC 3339 timestamp (`2026-01-02T03:04:05Z`, `...05.123456+02:00`), the form the
//! object contract gives `last_modified` in.

/// `Ok(())` when `text` is an RFC 3339 date-time with a zone (`Z` or `±HH:MM`), else what is wrong.
pub fn check(text: &str) -> Result<(), String> {
    let bytes = text.as_bytes();
    let shape = || {
        format!("{text:?} is not an RFC 3339 timestamp (like 2026-01-02T03:04:05Z or 2026-01-02T03:04:05.5+02:00)")
    };
    if bytes.len() < 20 {
        return Err(shape());
    }
    let digits = |from: usize, to: usize| -> Result<u32, String> {
        let part = text.get(from..to).ok_or_else(shape)?;
        if !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(shape());
        }
        part.parse::<u32>().map_err(|_| shape())
    };
    let at = |i: usize, want: &[u8]| bytes.get(i).is_some_and(|b| want.contains(b));
    if !(at(4, b"-") && at(7, b"-") && at(10, b"Tt") && at(13, b":") && at(16, b":")) {
        return Err(shape());
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 7)?, digits(8, 10)?);
    let (hour, minute, second) = (digits(11, 13)?, digits(14, 16)?, digits(17, 19)?);
    let days = days_in_month(year, month).ok_or_else(shape)?;
    if day == 0 || day > days || hour > 23 || minute > 59 || second > 60 {
        return Err(format!("{text:?} names a date or time that does not exist"));
    }
    let mut rest = &text[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let count = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if count == 0 {
            return Err(shape());
        }
        rest = &fraction[count..];
    }
    match rest {
        "Z" | "z" => Ok(()),
        zone if zone.len() == 6 && (zone.starts_with('+') || zone.starts_with('-')) => {
            let z = zone.as_bytes();
            let two = |i: usize| -> Option<u32> {
                let (a, b) = (z[i], z[i + 1]);
                (a.is_ascii_digit() && b.is_ascii_digit())
                    .then(|| u32::from(a - b'0') * 10 + u32::from(b - b'0'))
            };
            match (two(1), z[3], two(4)) {
                (Some(h), b':', Some(m)) if h <= 23 && m <= 59 => Ok(()),
                _ => Err(shape()),
            }
        }
        _ => Err(shape()),
    }
}

fn days_in_month(year: u32, month: u32) -> Option<u32> {
    let leap = (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400);
    Some(match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn accepts_what_stores_write() {
        for ok in [
            "2026-01-02T03:04:05Z",
            "2026-01-02T03:04:05.123456Z",
            "2024-02-29T23:59:59.5+02:00",
            "2026-12-31t00:00:00-05:30",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn refuses_other_shapes() {
        for bad in [
            "Thu, 03 Dec 2026 09:00:00 GMT",
            "2026-01-02 03:04:05Z",
            "2026-01-02T03:04:05",
            "2026-01-02T03:04:05.Z",
            "2026-13-02T03:04:05Z",
            "2025-02-29T03:04:05Z",
            "2026-01-02T24:04:05Z",
            "2026-01-02T03:04:05+2:00",
            "1767323045",
            "",
        ] {
            assert!(check(bad).is_err(), "{bad}");
        }
    }
}
