/* Tests for livereload.c: classification and planning tables, the script
 * tag, the embedded client, and edits on disk reaching a real stream. */
#include "cmocka_prelude.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live/livereload_internal.h"
#include "site/routes.h"
#include "live/sse.h"
#include "test_helpers.h"

static void test_classify_table(void **state)
{
    (void)state;
    static const struct {
        const char *path, *frag_prefix;
        enum livereload_kind kind;
        const char *name;
    } cases[] = {
        {"/style.css", NULL, LIVERELOAD_CSS, "/style.css"},
        {"/css/print.CSS", NULL, LIVERELOAD_CSS, "/css/print.CSS"},
        {"/assets/theme.css", NULL, LIVERELOAD_CSS, "/assets/theme.css"},
        {"/fragments/intro.html", "/fragments/", LIVERELOAD_FRAGMENT, "intro"},
        {"/fragments/ch1/fig.html", "/fragments/", LIVERELOAD_FRAGMENT, "ch1/fig"},
        {"/frag/x.html", "/frag/", LIVERELOAD_FRAGMENT, "x"},
        /* A css file among fragments is still css. */
        {"/fragments/a.css", "/fragments/", LIVERELOAD_CSS, "/fragments/a.css"},
        /* Not a fragment the loader would fetch: a page, or nothing. */
        {"/fragments/.html", "/fragments/", LIVERELOAD_RELOAD, "/fragments/.html"},
        {"/fragments/a.HTML", "/fragments/", LIVERELOAD_PAGE, "/fragments/a.HTML"},
        {"/fragments/data.json", "/fragments/", LIVERELOAD_RELOAD, "/fragments/data.json"},
        /* An .html outside the fragments route is a page (the page or a frame). */
        {"/fragments/intro.html", NULL, LIVERELOAD_PAGE, "/fragments/intro.html"},
        {"/index.html", NULL, LIVERELOAD_PAGE, "/index.html"},
        {"/assets/data/frame.htm", NULL, LIVERELOAD_PAGE, "/assets/data/frame.htm"},
        /* Images and media, any case. */
        {"/assets/fig.svg", NULL, LIVERELOAD_IMAGE, "/assets/fig.svg"},
        {"/assets/hero.PNG", NULL, LIVERELOAD_IMAGE, "/assets/hero.PNG"},
        {"/assets/a.b/photo.jpeg", NULL, LIVERELOAD_IMAGE, "/assets/a.b/photo.jpeg"},
        {"/assets/clip.webm", NULL, LIVERELOAD_IMAGE, "/assets/clip.webm"},
        {"/assets/audio/read aloud.ogg", NULL, LIVERELOAD_IMAGE, "/assets/audio/read aloud.ogg"},
        {"/fragments/fig.webp", "/fragments/", LIVERELOAD_IMAGE, "/fragments/fig.webp"},
        /* Scripts, data, folders, dotfiles: a reload. */
        {"/app.js", NULL, LIVERELOAD_RELOAD, "/app.js"},
        {"/data.json", NULL, LIVERELOAD_RELOAD, "/data.json"},
        {"/style.css.map", NULL, LIVERELOAD_RELOAD, "/style.css.map"},
        {"/png", NULL, LIVERELOAD_RELOAD, "/png"},
        {"/a.b/c", NULL, LIVERELOAD_RELOAD, "/a.b/c"},
        {"/.svg", NULL, LIVERELOAD_RELOAD, "/.svg"},
        {"/css", NULL, LIVERELOAD_RELOAD, "/css"},
        {"/dir/", NULL, LIVERELOAD_RELOAD, "/dir/"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *name = NULL;
        size_t len = 0;
        enum livereload_kind k = livereload_classify(cases[i].path, cases[i].frag_prefix, &name, &len);
        if (k != cases[i].kind || len != strlen(cases[i].name) ||
            memcmp(name, cases[i].name, len) != 0) {
            fail_msg("case %zu (%s): kind %d name %.*s", i, cases[i].path, (int)k, (int)len, name);
        }
    }
    assert_string_equal(livereload_kind_name(LIVERELOAD_CSS), "css");
    assert_string_equal(livereload_kind_name(LIVERELOAD_FRAGMENT), "fragment");
    assert_string_equal(livereload_kind_name(LIVERELOAD_RELOAD), "reload");
    assert_string_equal(livereload_kind_name(LIVERELOAD_PAGE), "page");
    assert_string_equal(livereload_kind_name(LIVERELOAD_IMAGE), "image");
}

static const struct route routes[] = {
    {.prefix = "/", .dir = "/srv/www"},
    {.prefix = "/fragments/", .dir = "/srv/fragments", .is_fragments = true},
    {.prefix = "/assets/", .dir = "/srv/assets"},
};

/* Renders planned events as "kind:data|kind:data". */
static void render(const struct livereload_event *ev, size_t n, char *out, size_t size)
{
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(out);
        snprintf(out + l, size - l, "%s%s:%s", i ? "|" : "", livereload_kind_name(ev[i].kind), ev[i].data);
    }
}

static void test_plan_table(void **state)
{
    (void)state;
    static const struct {
        struct watch_change ch[4];
        size_t n;
        bool overflow;
        const char *want;
    } cases[] = {
        {{{0, "style.css"}}, 1, false, "css:/style.css"},
        {{{0, "style.css"}, {2, "theme.css"}}, 2, false, "css:/style.css|css:/assets/theme.css"},
        {{{1, "intro.html"}}, 1, false, "fragment:intro"},
        {{{1, "intro.html"}, {0, "style.css"}}, 2, false, "fragment:intro|css:/style.css"},
        /* Pages and images keep their own events beside the others. */
        {{{0, "index.html"}, {2, "fig.png"}, {1, "intro.html"}}, 3, false,
         "page:/index.html|image:/assets/fig.png|fragment:intro"},
        {{{0, "index.html"}, {0, "index.html"}}, 2, false, "page:/index.html"},
        /* Any reload in the batch: just one reload. */
        {{{0, "style.css"}, {0, "index.html"}, {0, "app.js"}}, 3, false, "reload:/app.js"},
        {{{1, "intro.html"}, {2, "data.json"}}, 2, false, "reload:/assets/data.json"},
        {{{2, "new"}, {2, "new/fig.png"}}, 2, false, "reload:/assets/new"},
        /* The same css twice (two routes cannot, but a batch can repeat). */
        {{{0, "a.css"}, {0, "a.css"}}, 2, false, "css:/a.css"},
        /* Overflow wins over everything. */
        {{{0, "style.css"}}, 1, true, "reload:*"},
        {{{0}}, 0, true, "reload:*"},
        {{{0}}, 0, false, ""},
        /* An unknown route id is ignored. */
        {{{7, "x.css"}}, 1, false, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct watch_batch b = {.changes = cases[i].ch, .n = cases[i].n, .overflow = cases[i].overflow};
        struct livereload_event *ev = NULL;
        size_t n = 99;
        assert_true(livereload_plan(routes, 3, &b, &ev, &n));
        char got[256];
        render(ev, n, got, sizeof got);
        if (strcmp(got, cases[i].want) != 0) {
            fail_msg("case %zu: got [%s] want [%s]", i, got, cases[i].want);
        }
        livereload_events_free(ev, n);
    }
}

static void test_script_tag(void **state)
{
    (void)state;
    static const struct {
        const char *target, *src;
        size_t depth;
    } cases[] = {
        {"/", "__folio/reload.js", 0},
        {"/index.html", "__folio/reload.js", 0},
        {"/index.html?x=/y/z", "__folio/reload.js", 0}, /* the query is not a folder */
        {"/sub/", "../__folio/reload.js", 1},
        {"/assets/data/frame.html", "../../__folio/reload.js", 2},
        {"/a//b.html", "../../__folio/reload.js", 2}, /* as the browser will resolve it */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char tag[256], want[256];
        size_t depth = livereload_script_tag(cases[i].target, tag, sizeof(tag));
        snprintf(want, sizeof(want), "<script src=\"%s\" defer></script>", cases[i].src);
        assert_string_equal(tag, want);
        assert_int_equal(depth, cases[i].depth);
    }
    char small[20];
    livereload_script_tag("/a/b/c/d/e/f/g/h/i.html", small, sizeof(small));
    assert_int_equal(strlen(small), sizeof(small) - 1); /* truncated, terminated */
    /* The first part: a classic script (no defer: it runs before the parser
     * goes on), named by its version, marked as no part of the page. */
    char tag[256], want[256];
    livereload_early_tag(2, tag, sizeof(tag));
    snprintf(want, sizeof(want), "<script src=\"../../__folio/early.js?v=%s\" data-folio></script>", early_js_version);
    assert_string_equal(tag, want);
    assert_int_equal(strlen(early_js_version), 8);
    livereload_early_tag(8, small, sizeof(small));
    assert_int_equal(strlen(small), sizeof(small) - 1);
}

/* The keys of the client's `var handlers = { ... };` dispatch table. */
static bool client_handles(const char *event)
{
    const char *start = strstr(reload_js, "var handlers = {");
    assert_non_null(start);
    const char *end = strstr(start, "\n  };");
    assert_non_null(end);
    char key[64];
    snprintf(key, sizeof key, "\n    %s: ", event);
    const char *hit = strstr(start, key);
    return hit != NULL && hit < end;
}

static void test_embedded_client(void **state)
{
    (void)state;
    assert_true(reload_js_len > 500);
    assert_int_equal(reload_js[reload_js_len], '\0');
    assert_int_equal(strlen(reload_js), reload_js_len);
    assert_non_null(strstr(reload_js, "new URL('events', me.src)"));
    /* Every event the server sends (each kind, and sse.c's hello) has an
     * entry in the client's dispatch table, and nothing it never sends. */
    const enum livereload_kind kinds[] = {LIVERELOAD_CSS, LIVERELOAD_FRAGMENT, LIVERELOAD_RELOAD,
                                          LIVERELOAD_PAGE, LIVERELOAD_IMAGE};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (!client_handles(livereload_kind_name(kinds[i]))) {
            fail_msg("reload.js has no handler for the %s event", livereload_kind_name(kinds[i]));
        }
    }
    assert_true(client_handles("hello"));
    assert_true(client_handles("fault"));  /* report.c's */
    assert_true(client_handles("follow"));
    assert_false(client_handles("message"));
    /* The client writes nothing to the console: console.error is wrapped to
     * tell folio, and still writes what the page gave it. */
    const char *const clients[] = {reload_js, early_js};
    for (size_t i = 0; i < 2; i++) {
        assert_null(strstr(clients[i], "console.log"));
        assert_null(strstr(clients[i], "console.warn"));
        assert_null(strstr(clients[i], "console.info"));
    }
    assert_non_null(strstr(early_js, "consoleError.apply(console, arguments)"));
    /* The first part hands what it heard to the rest. */
    assert_int_equal(early_js[early_js_len], '\0');
    assert_non_null(strstr(early_js, "window.__folioEarly = {"));
    assert_non_null(strstr(reload_js, "window.__folioEarly.take(fault)"));
}

/* ---- end to end: files on disk -> events on a real stream ---- */

struct e2e {
    char root[64];
    char www[96], frags[96];
    struct sse_hub *hub;
    struct MHD_Daemon *d;
    struct livereload *lr;
    pthread_mutex_t mu;
    char invalidated[2048];
    int all;
};

static void on_invalidate(void *ctx, const char *abs_path)
{
    struct e2e *e = ctx;
    pthread_mutex_lock(&e->mu);
    size_t l = strlen(e->invalidated);
    snprintf(e->invalidated + l, sizeof e->invalidated - l, "%s\n", abs_path);
    pthread_mutex_unlock(&e->mu);
}

static void on_invalidate_all(void *ctx)
{
    struct e2e *e = ctx;
    pthread_mutex_lock(&e->mu);
    e->all++;
    pthread_mutex_unlock(&e->mu);
}

static bool was_invalidated(struct e2e *e, const char *path)
{
    char line[256];
    int n = snprintf(line, sizeof line, "%s\n", path);
    assert_true(n > 0 && (size_t)n < sizeof line);
    pthread_mutex_lock(&e->mu);
    bool yes = strstr(e->invalidated, line) != NULL;
    pthread_mutex_unlock(&e->mu);
    return yes;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **req_cls)
{
    (void)url;
    (void)method;
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)req_cls;
    struct e2e *e = cls;
    struct MHD_Response *r = sse_hub_attach(e->hub, conn);
    if (r == NULL) {
        return MHD_NO;
    }
    enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static void test_edits_reach_the_stream(void **state)
{
    (void)state;
    struct e2e *e = calloc(1, sizeof *e);
    assert_non_null(e);
    pthread_mutex_init(&e->mu, NULL);
    snprintf(e->root, sizeof e->root, "/tmp/folio-lr-XXXXXX");
    assert_non_null(mkdtemp(e->root));
    snprintf(e->www, sizeof e->www, "%s/www", e->root);
    snprintf(e->frags, sizeof e->frags, "%s/fragments", e->root);
    assert_int_equal(mkdir(e->www, 0755), 0);
    assert_int_equal(mkdir(e->frags, 0755), 0);
    th_write_file(e->www, "style.css", "a{}");
    th_write_file(e->www, "index.html", "<p>");
    th_write_file(e->frags, "intro.html", "<p>");

    e->hub = sse_hub_create(60000, 0);
    assert_non_null(e->hub);
    e->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME,
                            0, NULL, NULL, handler, e, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)2,
                            MHD_OPTION_END);
    assert_non_null(e->d);
    struct route r[] = {
        {.prefix = "/", .dir = e->www},
        {.prefix = "/fragments/", .dir = e->frags, .is_fragments = true},
    };
    const struct routes rs = {.items = r, .count = 2, .root = e->root};
    e->lr = livereload_create(&rs, NULL, e->hub, on_invalidate, on_invalidate_all, e);
    assert_non_null(e->lr);
    assert_int_equal(livereload_watch_count(e->lr), 2);

    uint16_t port = MHD_get_daemon_info(e->d, MHD_DAEMON_INFO_BIND_PORT)->port;
    struct th_stream s = {.fd = th_open_get(port, "/__folio/events", 0)};
    assert_true(th_read_until(&s, "event: hello", 2000));

    char abs[200];
    /* A stylesheet edit: invalidated, then a css event. */
    th_write_file(e->www, "style.css", "b{}");
    assert_true(th_read_until(&s, "event: css\ndata: /style.css\n\n", 3000));
    snprintf(abs, sizeof abs, "%s/style.css", e->www);
    assert_true(was_invalidated(e, abs));

    /* An atomic save (temp file renamed over it) is the same single event. */
    s.len = 0;
    th_write_file(e->www, "sedX1y2Z3", "c{}");
    char from[200];
    snprintf(from, sizeof from, "%s/sedX1y2Z3", e->www);
    assert_int_equal(rename(from, abs), 0);
    assert_true(th_read_until(&s, "event: css\ndata: /style.css\n\n", 3000));
    assert_null(strstr(s.buf, "sedX1y2Z3"));
    assert_null(strstr(s.buf, "event: reload"));

    /* A fragment edit. */
    s.len = 0;
    th_write_file(e->frags, "intro.html", "<p>new");
    assert_true(th_read_until(&s, "event: fragment\ndata: intro\n\n", 3000));
    snprintf(abs, sizeof abs, "%s/intro.html", e->frags);
    assert_true(was_invalidated(e, abs));

    /* The page itself: a page event (the client patches it in place). */
    s.len = 0;
    th_write_file(e->www, "index.html", "<p>new");
    assert_true(th_read_until(&s, "event: page\ndata: /index.html\n\n", 3000));

    /* A script: a reload. */
    s.len = 0;
    th_write_file(e->www, "app.js", "1");
    assert_true(th_read_until(&s, "event: reload\ndata: /app.js\n\n", 3000));

    livereload_destroy(e->lr);
    livereload_destroy(NULL);
    assert_true(sse_hub_close(e->hub, 1000));
    MHD_stop_daemon(e->d);
    sse_hub_destroy(e->hub);
    close(s.fd);
    assert_int_equal(e->all, 0);
    th_remove_tree(e->root);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify_table),
        cmocka_unit_test(test_plan_table),
        cmocka_unit_test(test_script_tag),
        cmocka_unit_test(test_embedded_client),
        cmocka_unit_test(test_edits_reach_the_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
