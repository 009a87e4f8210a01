/*
 * grade_plugin.h — the C ABI of `grade` native plugins, version 1.
 *
 * A plugin is a shared library (.so, .dylib, .dll) that a rubric pack declares:
 *
 *     plugins:
 *       - { name: shell, path: lib/shell, sha256: "<64 hex digits>" }
 *
 * and that `grade` loads only with --allow-plugins (or GRADE_ALLOW_PLUGINS=1), after the
 * file's sha256 matched the pinned one. Rust authors use the `grade-plugin` crate, whose
 * `plugin!` macro writes all of this; this header is for other languages (C, C++, Zig, Go
 * with cgo, ...). The Rust types in plugins/sdk/src/abi.rs are the same layout, and a test
 * checks that the two agree.
 *
 * What a plugin exports, and in which order the host touches it:
 *
 *   1. uint32_t grade_plugin_abi_version(void);
 *        Must return GRADE_PLUGIN_ABI_VERSION. The host reads it before any other symbol
 *        and refuses the library when it differs (naming both versions).
 *   2. const grade_plugin *grade_plugin_describe(void);
 *        The plugin's name, version, functions and source formats. The returned data, and
 *        every string and array it points to, must stay valid while the library is loaded,
 *        which is until the process ends: `grade` never unloads a plugin.
 *
 * Conventions:
 *   - Strings are UTF-8, passed as (pointer, length) in a grade_str, never NUL-terminated.
 *     A null pointer with length 0 is the empty string (and, for an entry's `error`, "none").
 *   - Memory never changes hands. What the host passes in is borrowed for the duration of
 *     the call: copy what you keep. What the plugin gives back goes through host callbacks,
 *     which copy it before they return, so the plugin may free or reuse it right after.
 *   - Functions may be called from several threads at once (one session per thread): keep
 *     them free of unsynchronised global state.
 *   - Nothing may unwind across the boundary: catch C++ exceptions (and Rust panics) and
 *     report them as an error instead.
 */
#ifndef GRADE_PLUGIN_H
#define GRADE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GRADE_PLUGIN_ABI_VERSION 1u

/* grade_function.kind: what a function is, and what its value means. */
#define GRADE_KIND_RULE 1u      /* decides a rule: points, evidence, flags, entries */
#define GRADE_KIND_CONDITION 2u /* a condition: value non-zero holds, no value is false */
#define GRADE_KIND_METRIC 3u    /* a metric: a number, no value is undefined */

/* grade_value.kind */
#define GRADE_VALUE_MISSING 0u /* absent, or JSON null */
#define GRADE_VALUE_BOOL 1u    /* number is 0 or 1 */
#define GRADE_VALUE_NUMBER 2u  /* number */
#define GRADE_VALUE_STRING 3u  /* text */
#define GRADE_VALUE_JSON 4u    /* an object or array: text is its JSON */

/* grade_output.text kinds */
#define GRADE_TEXT_EVIDENCE 1u
#define GRADE_TEXT_FLAG 2u
#define GRADE_TEXT_ERROR 3u /* why the call failed */

/* What a function or a source reader returns. */
#define GRADE_STATUS_OK 0
#define GRADE_STATUS_ERROR 1

typedef struct grade_str {
    const uint8_t *ptr;
    size_t len;
} grade_str;

/* One audit entry, lent to a function (see docs/sources.md for what each source puts in it). */
typedef struct grade_entry {
    grade_str timestamp; /* as the source spelled it */
    int64_t instant_ms;  /* milliseconds since the Unix epoch */
    grade_str domain;
    grade_str operation;
    uint32_t success; /* 1 or 0 */
    int64_t exit_code;
    double duration_ms;
    grade_str error; /* ptr NULL: no error */
} grade_entry;

/* The value of one declared field in one entry. */
typedef struct grade_value {
    uint32_t kind; /* GRADE_VALUE_* */
    double number;
    grade_str text;
} grade_value;

/* One call of a function: a session, and the fields the function declared it reads. */
typedef struct grade_call {
    grade_str session_id;
    const grade_entry *entries;
    size_t entry_count;
    /* entry_count * field_count values, row by row: entry i's field f is
     * fields[i * field_count + f], fields in the order the function declared them. */
    const grade_value *fields;
    size_t field_count;
    int64_t current; /* in a for_each rule, the index of the entry judged; else -1 */
    double score;    /* the dimension's running score before this rule */
} grade_call;

/* Where a function puts its result; every callback copies what it is given. */
typedef struct grade_output {
    void *host; /* pass it back to each callback */
    /* A metric's value, a condition's truth (non-zero holds), a rule's points. NaN and
     * infinities fail the call: no grade can hold them. */
    void (*value)(void *host, double value);
    /* Evidence, a flag, or the reason of a failed call (GRADE_TEXT_*; another kind fails
     * the call). A call gives at most 10000 evidence texts and flags and 4 MiB of text in
     * all, and names at most the session's entry count + 10000 entries: past that it fails. */
    void (*text)(void *host, uint32_t kind, grade_str text);
    /* A 0-based entry index behind the outcome (shown by --explain). */
    void (*entry)(void *host, uint64_t index);
} grade_output;

/* A function: GRADE_STATUS_OK, or GRADE_STATUS_ERROR after giving the reason as
 * GRADE_TEXT_ERROR. An error fails the session being graded (others still grade). */
typedef int32_t (*grade_fn)(const grade_call *call, const grade_output *out);

typedef struct grade_function {
    grade_str name; /* what packs write after the plugin's name: `native: shell.NAME`;
                     * unique within the plugin, or the host refuses it */
    uint32_t kind;  /* GRADE_KIND_* */
    grade_str doc;  /* one line; `grade rubric show` prints it */
    /* The entry fields the function reads, as field paths (`params.command`, `metadata.cwd`,
     * `result.exitCode`, ...); the host resolves them into grade_call.fields. */
    const grade_str *fields;
    size_t field_count;
    grade_fn call;
} grade_function;

/* An entry a source reader produces. */
typedef struct grade_new_entry {
    grade_str session_id;
    grade_str timestamp; /* RFC 3339, e.g. 2025-10-05T14:00:02.014Z */
    grade_str domain;
    grade_str operation;
    uint32_t success;
    int64_t exit_code;
    double duration_ms;
    grade_str error;         /* ptr NULL: none */
    grade_str params_json;   /* a JSON object, or empty */
    grade_str metadata_json; /* a JSON object, or empty; `source` defaults to the format */
    uint64_t line;           /* 1-based line or record, for messages; 0 if unknown */
} grade_new_entry;

typedef struct grade_source_output {
    void *host;
    /* Adds an entry. GRADE_STATUS_ERROR when the host refuses it (an unreadable timestamp,
     * params that are not an object): stop reading and return GRADE_STATUS_ERROR. */
    int32_t (*entry)(void *host, const grade_new_entry *entry);
    /* Something skipped or guessed, at a 1-based line (0: the file); reading goes on. */
    void (*warning)(void *host, uint64_t line, grade_str message);
    /* Why reading failed, at a 1-based line (0: the file). */
    void (*error)(void *host, uint64_t line, grade_str message);
} grade_source_output;

/* 1 when `head` (a file's first bytes, up to 64 KiB) is this format, else 0. The host asks
 * the pack's source plugins before its built-in formats: be strict. */
typedef uint32_t (*grade_detect_fn)(grade_str head);
/* Reads a whole file: `path` is for messages, `content` its bytes. */
typedef int32_t (*grade_read_fn)(grade_str path, grade_str content,
                                 const grade_source_output *out);

typedef struct grade_source {
    grade_str name; /* what --source-format takes, e.g. codex-rollout; unique among the
                     * built-in formats and those of every plugin a pack loads */
    grade_str doc;
    grade_detect_fn detect;
    grade_read_fn read;
} grade_source;

typedef struct grade_plugin {
    grade_str name;
    grade_str version;
    const grade_function *functions;
    size_t function_count;
    const grade_source *sources;
    size_t source_count;
} grade_plugin;

uint32_t grade_plugin_abi_version(void);
const grade_plugin *grade_plugin_describe(void);

#ifdef __cplusplus
}
#endif

#endif /* GRADE_PLUGIN_H */
