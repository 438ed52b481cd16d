#include "config.h"

/* the type-checking macros would rename the definitions below */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <stdarg.h>

#include "base/curl_dl.h"
#include "internal.h"

static struct {
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	char *(*easy_escape)(CURL *, const char *, int);
	void (*free)(void *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} api;

static const struct sb_dynlib_symbol symbols[] = {
	{ "curl_easy_init", (void **)&api.easy_init },
	{ "curl_easy_setopt", (void **)&api.easy_setopt },
	{ "curl_easy_perform", (void **)&api.easy_perform },
	{ "curl_easy_getinfo", (void **)&api.easy_getinfo },
	{ "curl_easy_cleanup", (void **)&api.easy_cleanup },
	{ "curl_easy_strerror", (void **)&api.easy_strerror },
	{ "curl_easy_escape", (void **)&api.easy_escape },
	{ "curl_free", (void **)&api.free },
	{ "curl_slist_append", (void **)&api.slist_append },
	{ "curl_slist_free_all", (void **)&api.slist_free_all },
};

static struct sb_dynlib lib = { "libcurl.so.4", "libcurl4", symbols, sizeof(symbols) / sizeof(symbols[0]), 0, "" };

int sb_curl_load(struct sb_error *err)
{
	return sb_dynlib_load(&lib, err);
}

SB_DYNLIB_FORWARDER CURL *curl_easy_init(void)
{
	return sb_curl_load(NULL) == 0 ? api.easy_init() : NULL;
}

/* The value's type follows from the option's number range (curl.h's
 * CURLOPTTYPE_*), as libcurl itself reads it. */
SB_DYNLIB_FORWARDER CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...)
{
	va_list ap;
	CURLcode rc;

	va_start(ap, option);
	if (option < CURLOPTTYPE_OBJECTPOINT)
		rc = api.easy_setopt(curl, option, va_arg(ap, long)); /* NOLINT(bugprone-branch-clone): two ranges of pointers */
	else if (option < CURLOPTTYPE_FUNCTIONPOINT)
		rc = api.easy_setopt(curl, option, va_arg(ap, void *));
	else if (option < CURLOPTTYPE_OFF_T)
		rc = api.easy_setopt(curl, option, va_arg(ap, void (*)(void)));
	else if (option < CURLOPTTYPE_BLOB)
		rc = api.easy_setopt(curl, option, va_arg(ap, curl_off_t));
	else
		rc = api.easy_setopt(curl, option, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

SB_DYNLIB_FORWARDER CURLcode curl_easy_perform(CURL *curl)
{
	return api.easy_perform(curl);
}

/* every CURLINFO_* takes one pointer */
SB_DYNLIB_FORWARDER CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...)
{
	va_list ap;
	CURLcode rc;

	va_start(ap, info);
	rc = api.easy_getinfo(curl, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

SB_DYNLIB_FORWARDER void curl_easy_cleanup(CURL *curl)
{
	if (sb_dynlib_loaded(&lib))
		api.easy_cleanup(curl);
}

SB_DYNLIB_FORWARDER const char *curl_easy_strerror(CURLcode code)
{
	return sb_dynlib_loaded(&lib) ? api.easy_strerror(code) : lib.error;
}

SB_DYNLIB_FORWARDER char *curl_easy_escape(CURL *curl, const char *s, int length)
{
	return api.easy_escape(curl, s, length);
}

SB_DYNLIB_FORWARDER void curl_free(void *p)
{
	if (sb_dynlib_loaded(&lib))
		api.free(p);
}

SB_DYNLIB_FORWARDER struct curl_slist *curl_slist_append(struct curl_slist *list, const char *s)
{
	return sb_curl_load(NULL) == 0 ? api.slist_append(list, s) : NULL;
}

SB_DYNLIB_FORWARDER void curl_slist_free_all(struct curl_slist *list)
{
	if (sb_dynlib_loaded(&lib))
		api.slist_free_all(list);
}
