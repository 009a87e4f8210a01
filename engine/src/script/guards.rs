//! The built-ins whose result can be far larger than their arguments, checked for room first.
//!
//! A run's memory is read at every operation (`limits.rs`), and one operation at most doubles
//! what a run holds, except for these: `pad` and `blob` build what their length asks for,
//! `replace` can square a string (`s.replace("a", s)`), and splitting a string into pieces
//! takes about 60 bytes a piece, 60 times the string split by `""`. Each is registered in the
//! engine's own namespace, where Rhai looks before its packages, and does what Rhai's does
//! once the room it needs is there. They are only registered when allocations are counted;
//! otherwise Rhai's own versions check its size limits.

use rhai::{Array, Blob, Dynamic, Engine, EvalAltResult, ImmutableString, Map, INT};

use super::limits::ensure_room;

type Fallible<T> = Result<T, Box<EvalAltResult>>;

/// What one item of an array takes (a `Dynamic`).
const SLOT: u64 = 16;
/// What one piece of a split string takes, about: its item and its own shared string.
const PIECE: u64 = 64;
/// What one key of a map takes beyond its value, about.
const MAP_KEY: u64 = 64;

pub(super) fn register(engine: &mut Engine) {
    engine.register_fn("pad", pad_array);
    engine.register_fn("pad", pad_string_with_char);
    engine.register_fn("pad", pad_string_with_string);
    engine.register_fn("pad", pad_blob);
    engine.register_fn("blob", blob_of_len);
    engine.register_fn("blob", blob_of_len_and_value);
    engine.register_fn("replace", replace);
    engine.register_fn("replace", replace_string_with_char);
    engine.register_fn("replace", replace_char_with_string);
    engine.register_fn("to_chars", to_chars);
    engine.register_fn("split", split_whitespace);
    engine.register_fn("split", split);
    engine.register_fn("split", splitn);
    engine.register_fn("split", split_char);
    engine.register_fn("split", splitn_char);
    engine.register_fn("split_rev", rsplit);
    engine.register_fn("split_rev", rsplitn);
    engine.register_fn("split_rev", rsplit_char);
    engine.register_fn("split_rev", rsplitn_char);
}

/// About what a copy of `value` allocates: strings are shared, arrays, maps and blobs copied.
fn footprint(value: &Dynamic) -> u64 {
    // A shared value is copied as a handle; it may be locked by the call under way.
    if value.is_shared() {
        return SLOT;
    }
    if let Some(items) = value.read_lock::<Array>() {
        return items.iter().fold(SLOT * items.len() as u64, |n, item| {
            n.saturating_add(footprint(item))
        });
    }
    if let Some(map) = value.read_lock::<Map>() {
        return map.values().fold(MAP_KEY * map.len() as u64, |n, item| {
            n.saturating_add(SLOT).saturating_add(footprint(item))
        });
    }
    if let Some(blob) = value.read_lock::<Blob>() {
        return blob.len() as u64;
    }
    0
}

/// Stops the run unless `count` items of `each` bytes fit in what it may still take.
fn room_for(count: usize, each: u64) -> Fallible<()> {
    ensure_room((count as u64).saturating_mul(each))
}

fn too_long() -> Box<EvalAltResult> {
    EvalAltResult::ErrorDataTooLarge("Length of string".to_owned(), rhai::Position::NONE).into()
}

fn pad_array(array: &mut Array, len: INT, item: Dynamic) -> Fallible<()> {
    let Ok(len) = usize::try_from(len) else {
        return Ok(());
    };
    if len <= array.len() {
        return Ok(());
    }
    room_for(len - array.len(), SLOT.saturating_add(footprint(&item)))?;
    array.resize(len, item);
    Ok(())
}

fn pad_string_with_char(string: &mut ImmutableString, len: INT, character: char) -> Fallible<()> {
    if len <= 0 {
        return Ok(());
    }
    let len = usize::try_from(len).map_err(|_| too_long())?;
    let orig_len = string.chars().count();
    if len <= orig_len {
        return Ok(());
    }
    room_for(len - orig_len, character.len_utf8() as u64)?;
    let p = string.make_mut();
    for _ in 0..(len - orig_len) {
        p.push(character);
    }
    Ok(())
}

fn pad_string_with_string(string: &mut ImmutableString, len: INT, padding: &str) -> Fallible<()> {
    if len <= 0 {
        return Ok(());
    }
    let len = usize::try_from(len).map_err(|_| too_long())?;
    let mut str_len = string.chars().count();
    let padding_len = padding.chars().count();
    if len <= str_len {
        return Ok(());
    }
    // A character is at most 4 bytes.
    room_for(len - str_len, 4)?;
    let p = string.make_mut();
    while str_len < len {
        if str_len + padding_len <= len {
            p.push_str(padding);
            str_len += padding_len;
        } else {
            p.extend(padding.chars().take(len - str_len));
            str_len = len;
        }
    }
    Ok(())
}

fn pad_blob(blob: &mut Blob, len: INT, value: INT) -> Fallible<()> {
    if len <= 0 {
        return Ok(());
    }
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len > blob.len() {
        room_for(len - blob.len(), 1)?;
        blob.resize(len, (value & 0xff) as u8);
    }
    Ok(())
}

fn blob_of_len(len: INT) -> Fallible<Blob> {
    blob_of_len_and_value(len, 0)
}

fn blob_of_len_and_value(len: INT, value: INT) -> Fallible<Blob> {
    if len <= 0 {
        return Ok(Blob::new());
    }
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    room_for(len, 1)?;
    Ok(vec![(value & 0xff) as u8; len])
}

/// Stops the run unless the result of replacing each `find` in `string` with `by` bytes fits.
fn room_to_replace(string: &str, find: &str, by: usize) -> Fallible<()> {
    let found = if find.is_empty() {
        string.chars().count() + 1
    } else {
        string.matches(find).count()
    };
    ensure_room((string.len() as u64).saturating_add((found as u64).saturating_mul(by as u64)))
}

fn replace(string: &mut ImmutableString, find: &str, by: &str) -> Fallible<()> {
    if string.is_empty() {
        return Ok(());
    }
    room_to_replace(string, find, by.len())?;
    *string = string.replace(find, by).into();
    Ok(())
}

fn replace_string_with_char(string: &mut ImmutableString, find: &str, by: char) -> Fallible<()> {
    replace(string, find, &by.to_string())
}

fn replace_char_with_string(string: &mut ImmutableString, find: char, by: &str) -> Fallible<()> {
    replace(string, &find.to_string(), by)
}

fn to_chars(string: &str) -> Fallible<Array> {
    if string.is_empty() {
        return Ok(Array::new());
    }
    room_for(string.chars().count(), SLOT)?;
    Ok(string.chars().map(Into::into).collect())
}

/// Stops the run unless `pieces` pieces of `string` fit.
fn room_for_pieces(string: &str, pieces: usize) -> Fallible<()> {
    room_for(pieces, PIECE)?;
    ensure_room(string.len() as u64)
}

/// How many pieces splitting `string` at `delimiter` makes, at most `segments`.
fn pieces(string: &str, delimiter: &str, segments: usize) -> usize {
    let all = if delimiter.is_empty() {
        string.chars().count() + 2
    } else {
        string.matches(delimiter).count() + 1
    };
    all.min(segments)
}

fn segments_of(segments: INT) -> usize {
    usize::try_from(segments).unwrap_or(usize::MAX)
}

fn split_whitespace(string: ImmutableString) -> Fallible<Array> {
    if string.is_empty() {
        return Ok(vec![string.into()]);
    }
    room_for_pieces(&string, string.split_whitespace().count())?;
    Ok(string.split_whitespace().map(Into::into).collect())
}

fn split(string: ImmutableString, delimiter: &str) -> Fallible<Array> {
    if string.is_empty() || (!delimiter.is_empty() && !string.contains(delimiter)) {
        return Ok(vec![string.into()]);
    }
    room_for_pieces(&string, pieces(&string, delimiter, usize::MAX))?;
    Ok(string.split(delimiter).map(Into::into).collect())
}

fn splitn(string: ImmutableString, delimiter: &str, segments: INT) -> Fallible<Array> {
    if segments <= 1 || string.is_empty() || (!delimiter.is_empty() && !string.contains(delimiter))
    {
        return Ok(vec![string.into()]);
    }
    let segments = segments_of(segments);
    room_for_pieces(&string, pieces(&string, delimiter, segments))?;
    Ok(string.splitn(segments, delimiter).map(Into::into).collect())
}

fn split_char(string: ImmutableString, delimiter: char) -> Fallible<Array> {
    if string.is_empty() || !string.contains(delimiter) {
        return Ok(vec![string.into()]);
    }
    room_for_pieces(&string, string.matches(delimiter).count() + 1)?;
    Ok(string.split(delimiter).map(Into::into).collect())
}

fn splitn_char(string: ImmutableString, delimiter: char, segments: INT) -> Fallible<Array> {
    if segments <= 1 || string.is_empty() || !string.contains(delimiter) {
        return Ok(vec![string.into()]);
    }
    let segments = segments_of(segments);
    room_for_pieces(
        &string,
        (string.matches(delimiter).count() + 1).min(segments),
    )?;
    Ok(string.splitn(segments, delimiter).map(Into::into).collect())
}

fn rsplit(string: ImmutableString, delimiter: &str) -> Fallible<Array> {
    if string.is_empty() || (!delimiter.is_empty() && !string.contains(delimiter)) {
        return Ok(vec![string.into()]);
    }
    room_for_pieces(&string, pieces(&string, delimiter, usize::MAX))?;
    Ok(string.rsplit(delimiter).map(Into::into).collect())
}

fn rsplitn(string: ImmutableString, delimiter: &str, segments: INT) -> Fallible<Array> {
    if segments <= 1 || string.is_empty() || (!delimiter.is_empty() && !string.contains(delimiter))
    {
        return Ok(vec![string.into()]);
    }
    let segments = segments_of(segments);
    room_for_pieces(&string, pieces(&string, delimiter, segments))?;
    Ok(string
        .rsplitn(segments, delimiter)
        .map(Into::into)
        .collect())
}

fn rsplit_char(string: ImmutableString, delimiter: char) -> Fallible<Array> {
    if string.is_empty() || !string.contains(delimiter) {
        return Ok(vec![string.into()]);
    }
    room_for_pieces(&string, string.matches(delimiter).count() + 1)?;
    Ok(string.rsplit(delimiter).map(Into::into).collect())
}

fn rsplitn_char(string: ImmutableString, delimiter: char, segments: INT) -> Fallible<Array> {
    if segments <= 1 || string.is_empty() || !string.contains(delimiter) {
        return Ok(vec![string.into()]);
    }
    let segments = segments_of(segments);
    room_for_pieces(
        &string,
        (string.matches(delimiter).count() + 1).min(segments),
    )?;
    Ok(string
        .rsplitn(segments, delimiter)
        .map(Into::into)
        .collect())
}
