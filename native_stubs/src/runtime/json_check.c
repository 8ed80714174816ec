/*
 * Well-formedness check of an aclInit configuration file. The real runtime parses the file as JSON
 * (nlohmann) and refuses it with ACL_ERROR_PARSE_FILE when that fails or when objects or arrays
 * nest more than 10 deep; an empty file is accepted. The emulator reads no keys, so validating the
 * syntax is all it needs.
 */
#include <stdio.h>
#include <string.h>

#include "rt_internal.h"

#define MAX_DEPTH 10

typedef struct {
    const char *p, *end;
    int objects, arrays;   /* current nesting */
    const char *error;
} cursor;

static int fail(cursor *c, const char *why) {
    if (!c->error) c->error = why;
    return -1;
}

static void skip_space(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static int literal(cursor *c, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return fail(c, "unexpected token");
    c->p += n;
    return 0;
}

static int is_hex(char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

static int string(cursor *c) {
    c->p++;   /* opening quote */
    while (c->p < c->end) {
        unsigned char ch = (unsigned char)*c->p++;
        if (ch == '"') return 0;
        if (ch < 0x20) return fail(c, "control character in a string");
        if (ch != '\\') continue;
        if (c->p >= c->end) break;
        char esc = *c->p++;
        if (esc == 'u') {
            for (int i = 0; i < 4; i++, c->p++)
                if (c->p >= c->end || !is_hex(*c->p)) return fail(c, "bad \\u escape");
        } else if (!strchr("\"\\/bfnrt", esc)) {
            return fail(c, "bad escape in a string");
        }
    }
    return fail(c, "unterminated string");
}

static int digits(cursor *c) {
    const char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++;
    return c->p > start ? 0 : fail(c, "bad number");
}

static int number(cursor *c) {
    if (*c->p == '-') c->p++;
    if (c->p < c->end && *c->p == '0') c->p++;
    else if (digits(c) != 0) return -1;
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        if (digits(c) != 0) return -1;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-')) c->p++;
        if (digits(c) != 0) return -1;
    }
    return 0;
}

static int value(cursor *c);

/* Parses `{...}` or `[...]`; `close` is the closing bracket. */
static int container(cursor *c, char close) {
    int *depth = close == '}' ? &c->objects : &c->arrays;
    if (++*depth > MAX_DEPTH) return fail(c, "nested more than 10 levels deep");
    c->p++;
    skip_space(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        --*depth;
        return 0;
    }
    for (;;) {
        skip_space(c);
        if (close == '}') {
            if (c->p >= c->end || *c->p != '"') return fail(c, "expected a member name");
            if (string(c) != 0) return -1;
            skip_space(c);
            if (c->p >= c->end || *c->p != ':') return fail(c, "expected ':'");
            c->p++;
        }
        if (value(c) != 0) return -1;
        skip_space(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        if (c->p < c->end && *c->p == close) {
            c->p++;
            --*depth;
            return 0;
        }
        return fail(c, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int value(cursor *c) {
    skip_space(c);
    if (c->p >= c->end) return fail(c, "unexpected end of input");
    switch (*c->p) {
    case '{': return container(c, '}');
    case '[': return container(c, ']');
    case '"': return string(c);
    case 't': return literal(c, "true");
    case 'f': return literal(c, "false");
    case 'n': return literal(c, "null");
    default:
        if (*c->p == '-' || (*c->p >= '0' && *c->p <= '9')) return number(c);
        return fail(c, "unexpected character");
    }
}

int rt_json_check(const char *text, size_t len, char *why, size_t why_len) {
    if (len == 0) return 0;
    cursor c = {text, text + len, 0, 0, NULL};
    if (value(&c) == 0) {
        skip_space(&c);
        if (c.p == c.end) return 0;
        fail(&c, "trailing characters after the JSON value");
    }
    snprintf(why, why_len, "%s at byte %zu", c.error, (size_t)(c.p - text));
    return -1;
}
