/*
 * A grade plugin in C: the metric `failures` (how many entries failed) and the condition
 * `slow` (an entry took longer than `params.limit_ms`, or 1000 ms). Build it with
 *
 *     cc -shared -fPIC -I plugins -o libfailures.so plugins/examples/c/failures.c
 *
 * (`.dylib` on macOS). tests/plugins.rs builds and grades with it when a C compiler is found.
 */
#include "grade_plugin.h"

#include <string.h>

static grade_str s(const char *text) {
    grade_str r = {(const uint8_t *)text, strlen(text)};
    return r;
}

static int32_t failures(const grade_call *call, const grade_output *out) {
    double n = 0;
    for (size_t i = 0; i < call->entry_count; i++) {
        if (!call->entries[i].success) n += 1;
    }
    out->value(out->host, n);
    return GRADE_STATUS_OK;
}

/* In a for_each rule: whether the current entry was slow; over a session: whether any was. */
static int32_t slow(const grade_call *call, const grade_output *out) {
    for (size_t i = 0; i < call->entry_count; i++) {
        if (call->current >= 0 && (size_t)call->current != i) continue;
        const grade_value *limit = &call->fields[i * call->field_count];
        double ms = limit->kind == GRADE_VALUE_NUMBER ? limit->number : 1000.0;
        if (call->entries[i].duration_ms > ms) {
            out->entry(out->host, i);
            out->value(out->host, 1.0);
            return GRADE_STATUS_OK;
        }
    }
    return GRADE_STATUS_OK;
}

static grade_str slow_fields[1];
static grade_function functions[2];
static grade_plugin plugin;

uint32_t grade_plugin_abi_version(void) { return GRADE_PLUGIN_ABI_VERSION; }

const grade_plugin *grade_plugin_describe(void) {
    slow_fields[0] = s("params.limit_ms");
    functions[0] = (grade_function){s("failures"), GRADE_KIND_METRIC, s("how many entries failed"),
                                    NULL, 0, failures};
    functions[1] = (grade_function){s("slow"), GRADE_KIND_CONDITION,
                                    s("an entry took longer than params.limit_ms (default 1000 ms)"),
                                    slow_fields, 1, slow};
    plugin = (grade_plugin){s("failures"), s("0.1.0"), functions, 2, NULL, 0};
    return &plugin;
}
