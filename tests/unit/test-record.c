/* Sandbox records, settings and the clock: pure data, no runsc. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "base/jsonfile.h"
#include "sandbox/record.h"
#include "sandbox/sandbox.h"
#include "base/root.h"
#include "sandbox/settings.h"
#include "testutil.h"
#include "base/units.h"

static char *dir;
static struct sb_root *root;

static void setup(void)
{
	dir = tu_tempdir("record");
	cr_assert_not_null(dir);
	cr_assert_eq(sb_root_open(&root, dir, NULL), 0);
}

static void teardown(void)
{
	sb_root_close(root);
	tu_remove(dir);
	free(dir);
}

TestSuite(record, .init = setup, .fini = teardown);

Test(record, round_trip_keeps_every_field)
{
	struct sb_sandbox_mount mounts[] = { { "/srv/data", "/data", SB_MOUNT_RO, 2049, 1234567, 1 } };
	struct sb_sandbox_label labels[] = { { "team", "search" } };
	struct sb_record rec = {
		.name = "box-1", .id = "sb-0123456789abcdef", .created = 1700000000,
		.image_ref = "docker.io/library/busybox:latest", .kind = SB_KIND_TEMPORARY,
		.idle_timeout = 1800, .expiry_action = SB_EXPIRY_STOP, .network = 1, .exchange = 1,
		.mounts = mounts, .n_mounts = 1, .memory = 512ULL << 20, .cpus = 1.5, .disk = 2ULL << 30,
		.owner = "plugin:search", .labels = labels, .n_labels = 1,
		.state = SB_STATE_RUNNING, .reason = "created", .state_changed = 1700000001,
		.backend = "runsc", .runtime_build = "runsc:123:456.000000789",
		.boot_id = "0b4b7fd4-5bd9-4f2e-9a55-2a0b1f0d3c11",
	};
	struct sb_record back;
	struct sb_error err;
	struct sb_egress_rule rules[] = { { 0x0a000000, 8, 443 }, { 0xc0000201, 32, 0 } };

	rec.egress = (struct sb_egress){ .mode = SB_EGRESS_ALLOW, .rules = rules, .n_rules = 2 };
	strcpy(rec.image_digest, "sha256:0000000000000000000000000000000000000000000000000000000000000001");
	char *sdir = sb_path_join(dir, "sandboxes/box-1");
	cr_assert_eq(sb_fs_mkdirs(sdir, 0700, NULL), 0);
	cr_assert_eq(sb_record_save(root, &rec, &err), 0, "%s", err.msg);
	cr_assert_eq(sb_record_load(&back, root, "box-1", &err), 0, "%s", err.msg);
	cr_assert_str_eq(back.name, "box-1");
	cr_assert_str_eq(back.id, rec.id);
	cr_assert_str_eq(back.image_digest, rec.image_digest);
	cr_assert_str_eq(back.image_ref, rec.image_ref);
	cr_assert_eq(back.kind, SB_KIND_TEMPORARY);
	cr_assert_eq(back.expiry_action, SB_EXPIRY_STOP);
	cr_assert_eq(back.idle_timeout, 1800);
	cr_assert_eq(back.network, 1);
	cr_assert_eq(back.n_mounts, 1);
	cr_assert_str_eq(back.mounts[0].host, "/srv/data");
	cr_assert_eq(back.mounts[0].mode, SB_MOUNT_RO);
	cr_assert_eq(back.memory, 512ULL << 20);
	cr_assert_float_eq(back.cpus, 1.5, 1e-9);
	cr_assert_eq(back.disk, 2ULL << 30);
	cr_assert_str_eq(back.owner, "plugin:search");
	cr_assert_eq(back.n_labels, 1);
	cr_assert_str_eq(back.labels[0].value, "search");
	cr_assert_eq(back.state, SB_STATE_RUNNING);
	cr_assert_str_eq(back.reason, "created");
	cr_assert_str_eq(back.backend, "runsc");
	cr_assert_str_eq(back.runtime_build, rec.runtime_build);
	cr_assert_str_eq(back.boot_id, rec.boot_id);
	cr_assert_eq(back.mounts[0].dev, 2049);
	cr_assert_eq(back.mounts[0].ino, 1234567);
	cr_assert_eq(back.mounts[0].allow_sensitive, 1);
	cr_assert_eq(back.egress.mode, SB_EGRESS_ALLOW);
	cr_assert_eq(back.egress.n_rules, 2);
	cr_assert_eq(back.egress.rules[0].net, 0x0a000000);
	cr_assert_eq(back.egress.rules[0].prefix, 8);
	cr_assert_eq(back.egress.rules[0].port, 443);
	cr_assert_eq(back.egress.rules[1].prefix, 32);

	/* the schema other helpers rely on */
	char *path = sb_path_join(sdir, "sandbox.json");
	json_t *doc;
	cr_assert_eq(sb_json_load(&doc, path, 1 << 20, NULL), 0);
	cr_assert_eq(json_integer_value(json_object_get(doc, "schema")), 2);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "backend")), "runsc");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(doc, "image"), "digest")), rec.image_digest);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "kind")), "temporary");
	json_t *egress = json_object_get(doc, "egress");
	cr_assert_str_eq(json_string_value(json_object_get(egress, "mode")), "allow");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(egress, "allow"), 0)), "10.0.0.0/8:443");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(egress, "allow"), 1)), "192.0.2.1");
	/* not a fork: no parent in the file */
	cr_assert_null(json_object_get(doc, "parent"));
	json_decref(doc);
	free(path);
	free(sdir);
	sb_record_clear(&back);
}

Test(record, a_fork_names_its_parent)
{
	struct sb_record rec = {
		.name = "fk", .id = "sb-0123456789abcdef", .created = 1700000000, .image_ref = "",
		.kind = SB_KIND_PERMANENT, .expiry_action = SB_EXPIRY_RM, .owner = "", .state = SB_STATE_RUNNING,
		.reason = "forked", .parent = "src", .parent_id = "sb-fedcba9876543210",
	};
	struct sb_record back;
	struct sb_error err;

	strcpy(rec.image_digest, "sha256:0000000000000000000000000000000000000000000000000000000000000001");
	json_t *doc = sb_record_to_json(&rec);
	cr_assert_not_null(doc);
	json_t *parent = json_object_get(doc, "parent");
	cr_assert_str_eq(json_string_value(json_object_get(parent, "name")), "src");
	cr_assert_str_eq(json_string_value(json_object_get(parent, "id")), "sb-fedcba9876543210");
	cr_assert_eq(sb_record_from_json(&back, doc, &err), 0, "%s", err.msg);
	cr_assert_str_eq(back.parent, "src");
	cr_assert_str_eq(back.parent_id, "sb-fedcba9876543210");
	sb_record_clear(&back);
	/* a parent without its id is malformed, not half read */
	json_object_del(parent, "id");
	cr_assert_lt(sb_record_from_json(&back, doc, &err), 0);
	json_decref(doc);
}

/* The image's Env, WorkingDir and User ride in the record (and so into a
 * fork's); a record from before has none, one with a wrong shape is refused. */
Test(record, image_config)
{
	struct sb_record rec = {
		.name = "ic", .id = "sb-0123456789abcdef", .created = 1700000000, .image_ref = "",
		.kind = SB_KIND_PERMANENT, .expiry_action = SB_EXPIRY_RM, .owner = "", .state = SB_STATE_RUNNING,
		.reason = "created",
	};
	struct sb_record back;
	struct sb_error err;

	strcpy(rec.image_digest, "sha256:0000000000000000000000000000000000000000000000000000000000000001");
	json_t *doc = sb_record_to_json(&rec);
	cr_assert_null(json_object_get(doc, "image_config"), "no config, no key: records of others stay as they were");
	cr_assert_eq(sb_record_from_json(&back, doc, &err), 0, "%s", err.msg);
	cr_assert_null(back.image_config);
	sb_record_clear(&back);
	json_decref(doc);

	rec.image_config = json_pack("{s:[s], s:s, s:s}", "Env", "A=1", "WorkingDir", "/app", "User", "nobody");
	doc = sb_record_to_json(&rec);
	cr_assert_eq(sb_record_from_json(&back, doc, &err), 0, "%s", err.msg);
	cr_assert(json_equal(back.image_config, rec.image_config));
	sb_record_clear(&back);
	json_object_set_new(json_object_get(doc, "image_config"), "Env", json_pack("[i]", 3));
	cr_assert_eq(sb_record_from_json(&back, doc, &err), SB_ERR_FORMAT);
	cr_assert(strstr(err.msg, "invalid image_config"), "%s", err.msg);
	json_object_set_new(json_object_get(doc, "image_config"), "Env", json_pack("[s]", "NOEQUALS"));
	cr_assert_eq(sb_record_from_json(&back, doc, &err), SB_ERR_FORMAT);
	json_object_set_new(doc, "image_config", json_pack("{s:i}", "User", 0));
	cr_assert_eq(sb_record_from_json(&back, doc, &err), SB_ERR_FORMAT);
	json_decref(doc);
	json_decref(rec.image_config);
}

static json_t *build_record(const void *arg)
{
	return sb_record_to_json(arg);
}

/* A record that cannot be built whole is not built: each of jansson's
 * allocations fails in turn, and no mount, label or limit goes missing. */
Test(record, json_is_whole_or_nothing_when_memory_runs_out)
{
	struct sb_sandbox_mount mounts[] = { { "/srv/a", "/a", SB_MOUNT_RO }, { "/srv/b", "/b", SB_MOUNT_RW } };
	struct sb_sandbox_label labels[] = { { "team", "search" }, { "tier", "dev" } };
	struct sb_record rec = {
		.name = "box", .id = "sb-0123456789abcdef", .image_ref = "busybox", .mounts = mounts, .n_mounts = 2,
		.memory = 1ULL << 30, .cpus = 2, .owner = "me", .labels = labels, .n_labels = 2, .reason = "created",
	};
	json_t *want = sb_record_to_json(&rec);

	cr_assert_eq(json_array_size(json_object_get(want, "mounts")), 2);
	cr_assert_eq(json_object_size(json_object_get(want, "labels")), 2);
	long n = tu_json_whole_or_nothing(build_record, &rec, want);
	cr_assert_gt(n, 30, "failing allocation %ld gave a record that lacks a part", -n);
	json_decref(want);
}

Test(record, missing_and_future_schema)
{
	struct sb_record rec;
	struct sb_error err;

	cr_assert_eq(sb_record_load(&rec, root, "nope", &err), SB_ERR_NOTFOUND);
	cr_assert(strstr(err.msg, "'nope'"));
	json_t *doc = json_pack("{s:i, s:s}", "schema", 3, "name", "x");
	cr_assert_eq(sb_record_from_json(&rec, doc, &err), SB_ERR_FORMAT);
	json_decref(doc);
}

/* A record exactly as wave 1 (schema 1) wrote it: no backend, no runtime, no
 * mount identities. It loads as a runsc sandbox and is saved as schema 2. */
static const char schema1[] =
	"{\"schema\": 1, \"name\": \"old\", \"id\": \"sb-00112233445566ff\", \"created\": 1700000000,"
	" \"image\": {\"ref\": \"docker.io/library/busybox:test\", \"digest\":"
	" \"sha256:0000000000000000000000000000000000000000000000000000000000000002\"},"
	" \"kind\": \"permanent\", \"idle_timeout\": 0, \"expiry_action\": \"rm\", \"network\": false,"
	" \"mounts\": [{\"host\": \"/srv\", \"path\": \"/srv\", \"mode\": \"rw\"}], \"exchange\": true,"
	" \"resources\": {\"memory\": 0, \"cpus\": 0.0}, \"owner\": \"\", \"labels\": {},"
	" \"state\": \"stopped\", \"reason\": \"stopped by user\", \"state_changed\": 1700000005}";

Test(record, schema_1_records_migrate_on_load)
{
	struct sb_record rec, back;
	struct sb_error err;
	char *sdir = sb_path_join(dir, "sandboxes/old"), *path = sb_path_join(sdir, "sandbox.json");

	cr_assert_eq(sb_fs_mkdirs(sdir, 0700, NULL), 0);
	cr_assert_eq(sb_fs_write_atomic(path, schema1, strlen(schema1), 0600, NULL), 0);
	cr_assert_eq(sb_record_load(&rec, root, "old", &err), 0, "%s", err.msg);
	cr_assert_eq(rec.schema, SB_RECORD_SCHEMA);
	cr_assert_str_eq(rec.backend, "runsc");
	cr_assert_str_eq(rec.runtime_build, "");
	cr_assert_str_eq(rec.boot_id, "");
	cr_assert_eq(rec.n_mounts, 1);
	cr_assert_eq(rec.mounts[0].mode, SB_MOUNT_RW);
	cr_assert_eq(rec.mounts[0].dev, 0);
	cr_assert_eq(rec.mounts[0].allow_sensitive, 0);
	cr_assert_eq(rec.state, SB_STATE_STOPPED);
	cr_assert_eq(rec.disk, 0, "records from before --disk have no cap");
	/* records from before egress policies have the default one */
	cr_assert_eq(rec.egress.mode, SB_EGRESS_DEFAULT);
	cr_assert_eq(rec.egress.n_rules, 0);
	cr_assert_eq(sb_record_save(root, &rec, &err), 0, "%s", err.msg);
	json_t *doc;
	cr_assert_eq(sb_json_load(&doc, path, 1 << 20, NULL), 0);
	cr_assert_eq(json_integer_value(json_object_get(doc, "schema")), 2);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "backend")), "runsc");
	json_decref(doc);
	cr_assert_eq(sb_record_load(&back, root, "old", &err), 0, "%s", err.msg);
	cr_assert_str_eq(back.id, rec.id);
	cr_assert_str_eq(back.mounts[0].host, "/srv");
	sb_record_clear(&rec);
	sb_record_clear(&back);
	free(path);
	free(sdir);
}

Test(record, durations_and_sizes)
{
	cr_assert_eq(sb_units_parse_duration("90"), 90);
	cr_assert_eq(sb_units_parse_duration("30m"), 1800);
	cr_assert_eq(sb_units_parse_duration("2h"), 7200);
	cr_assert_eq(sb_units_parse_duration("1d"), 86400);
	cr_assert_eq(sb_units_parse_duration("m"), -1);
	cr_assert_eq(sb_units_parse_duration("5x"), -1);
	cr_assert_eq(sb_units_parse_size("512m"), 512LL << 20);
	cr_assert_eq(sb_units_parse_size("2G"), 2LL << 30);
	cr_assert_eq(sb_units_parse_size("64MiB"), 64LL << 20);
	cr_assert_eq(sb_units_parse_size("12"), 12);
	cr_assert_eq(sb_units_parse_size("-1"), -1);
	cr_assert_eq(sb_units_parse_size("1q"), -1);

	/* what is shown reads back as (about) what was given */
	char buf[32];
	sb_units_format_size(buf, sizeof(buf), 512ULL << 20, SB_UNITS_TEXT);
	cr_assert_str_eq(buf, "512.0 MiB");
	sb_units_format_size(buf, sizeof(buf), 512ULL << 20, SB_UNITS_COMPACT);
	cr_assert_str_eq(buf, "512M");
	cr_assert_eq(sb_units_parse_size(buf), 512LL << 20);
	sb_units_format_size(buf, sizeof(buf), 1536, SB_UNITS_COMPACT);
	cr_assert_str_eq(buf, "1.5K");
	sb_units_format_size(buf, sizeof(buf), 999, SB_UNITS_TEXT);
	cr_assert_str_eq(buf, "999 B");
	sb_units_format_duration(buf, sizeof(buf), 245);
	cr_assert_str_eq(buf, "4m05s");
	sb_units_format_duration(buf, sizeof(buf), 2 * 86400 + 3 * 3600 + 59);
	cr_assert_str_eq(buf, "2d03h");
	sb_units_format_duration(buf, sizeof(buf), -1);
	cr_assert_str_eq(buf, "-");
}

Test(record, clock_is_injectable)
{
	setenv("SANDBENCH_NOW", "1234567", 1);
	cr_assert_eq(sb_clock_now(), 1234567);
	unsetenv("SANDBENCH_NOW");
	cr_assert_gt(sb_clock_now(), 1700000000);
}

Test(record, name_rule)
{
	static const char *const good[] = { "a", "A-1", "x_y.z", "9", "a..b", "a-" };
	static const char *const bad[] = { "", ".a", "-a", "a/b", "a b", "..", "\xc3\xa4", "a\n" };
	char name[SB_NAME_MAX + 2];
	struct sb_error err;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_assert_eq(sb_sandbox_name_check(good[i], NULL), 0, "%s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(sb_sandbox_name_check(bad[i], NULL), SB_ERR_INVALID, "%s", bad[i]);
	cr_assert_eq(sb_sandbox_name_check(NULL, NULL), SB_ERR_INVALID);
	memset(name, 'a', SB_NAME_MAX);
	name[SB_NAME_MAX] = '\0';
	cr_assert_eq(sb_sandbox_name_check(name, NULL), 0);
	strcat(name, "a");
	cr_assert_eq(sb_sandbox_name_check(name, &err), SB_ERR_INVALID);
	cr_assert(strstr(err.msg, "invalid sandbox name 'aaa"), "%s", err.msg);
	cr_assert_eq(SB_SANDBOX_NAME_MAX, SB_NAME_MAX);
}

/* With the wall clock injected, the deadline clock still follows the
 * kernel's monotonic one. */
Test(record, monotonic_clock_ignores_the_injected_time)
{
	struct timespec ts;

	setenv("SANDBENCH_NOW", "1234567", 1);
	cr_assert_eq(sb_clock_now(), 1234567);
	long long ours = sb_clock_monotonic_ms();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	unsetenv("SANDBENCH_NOW");
	long long kernel = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	cr_assert(ours <= kernel && kernel - ours < 1000, "monotonic %lld ms, kernel %lld ms", ours, kernel);
}

Test(record, settings_root_overrides_defaults)
{
	struct sb_settings s;
	struct sb_error err;
	char *conf = sb_path_join(dir, "config");

	setenv("SANDBENCH_DEFAULTS", "/nonexistent", 1);
	cr_assert_eq(sb_settings_load(&s, root, &err), 0, "%s", err.msg);
	cr_assert_eq(s.kind, SB_KIND_TEMPORARY);
	cr_assert_eq(s.idle_timeout, 1800);
	cr_assert_eq(s.network, 0);
	const char *text = "# mine\nkind = permanent\nidle_timeout = 5m\nnetwork = on\n";
	cr_assert_eq(sb_fs_write_atomic(conf, text, strlen(text), 0600, NULL), 0);
	cr_assert_eq(sb_settings_load(&s, root, &err), 0, "%s", err.msg);
	cr_assert_eq(s.kind, SB_KIND_PERMANENT);
	cr_assert_eq(s.idle_timeout, 300);
	cr_assert_eq(s.network, 1);
	cr_assert_eq(sb_fs_write_atomic(conf, "idel = 5m\n", 10, 0600, NULL), 0);
	cr_assert_eq(sb_settings_load(&s, root, &err), SB_ERR_FORMAT);
	cr_assert(strstr(err.msg, "idel"));
	unsetenv("SANDBENCH_DEFAULTS");
	free(conf);
}

/* A service and published ports go to the file and come back; without them
 * the file has neither key (records of other sandboxes stay as they were). */
Test(record, service_and_published_ports_round_trip)
{
	struct sb_publish pub[] = { { "127.0.0.1", 8080, 80 }, { "192.0.2.7", 2222, 22 } };
	struct sb_record rec = {
		.name = "svc", .id = "sb-0123456789abcdef", .image_ref = "", .kind = SB_KIND_PERMANENT,
		.expiry_action = SB_EXPIRY_RM, .owner = "", .state = SB_STATE_RUNNING, .reason = "created",
		.service = { .command = "httpd -f", .health = "nc -z 127.0.0.1 80", .interval = 5,
			     .restart = SB_RESTART_ON_FAILURE },
		.publish = pub, .n_publish = 2,
	};
	struct sb_record back;
	struct sb_error err;

	strcpy(rec.image_digest, "sha256:0000000000000000000000000000000000000000000000000000000000000001");
	json_t *doc = sb_record_to_json(&rec);
	cr_assert_not_null(doc);
	cr_assert_eq(sb_record_from_json(&back, doc, &err), 0, "%s", err.msg);
	cr_assert_str_eq(back.service.command, "httpd -f");
	cr_assert_str_eq(back.service.health, "nc -z 127.0.0.1 80");
	cr_assert_eq(back.service.interval, 5);
	cr_assert_eq(back.service.restart, SB_RESTART_ON_FAILURE);
	cr_assert_eq(back.n_publish, 2);
	cr_assert_str_eq(back.publish[1].address, "192.0.2.7");
	cr_assert_eq(back.publish[1].host_port, 2222);
	cr_assert_eq(back.publish[1].port, 22);
	sb_record_clear(&back);
	long n = tu_json_whole_or_nothing(build_record, &rec, doc);
	cr_assert_gt(n, 0, "failing allocation %ld gave a record that lacks a part", -n);
	/* a port out of range in the file is a malformed record, not a wrong port */
	json_integer_set(json_object_get(json_array_get(json_object_get(doc, "publish"), 0), "port"), 70000);
	cr_assert_eq(sb_record_from_json(&back, doc, &err), SB_ERR_FORMAT);
	json_decref(doc);

	rec.service = (struct sb_service){ 0 };
	rec.n_publish = 0;
	doc = sb_record_to_json(&rec);
	cr_assert_null(json_object_get(doc, "service"));
	cr_assert_null(json_object_get(doc, "publish"));
	cr_assert_eq(sb_record_from_json(&back, doc, &err), 0, "%s", err.msg);
	cr_assert_null(back.service.command);
	cr_assert_eq(back.n_publish, 0);
	sb_record_clear(&back);
	json_decref(doc);
}

Test(record, publish_items_parse_or_say_why)
{
	static const struct {
		const char *text, *address;
		unsigned short host_port, port;
	} good[] = {
		{ "8080:80", "127.0.0.1", 8080, 80 },
		{ "127.0.0.2:1:65535", "127.0.0.2", 1, 65535 },
		{ "0.0.0.0:443:8443", "0.0.0.0", 443, 8443 },
	};
	static const char *const bad[] = { "", "80", ":80", "8080:", "0:80", "65536:80", "8080:+80", "8080:-1",
					   "x:80", "example.com:80:80", "::1:80:80", "1.2.3.4:5:6:7", "080080808080808080:1" };
	struct sb_publish p;
	struct sb_error err;

	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
		cr_assert_eq(sb_publish_parse(&p, good[i].text, &err), 0, "%s: %s", good[i].text, err.msg);
		cr_assert_str_eq(p.address, good[i].address);
		cr_assert_eq(p.host_port, good[i].host_port, "%s", good[i].text);
		cr_assert_eq(p.port, good[i].port, "%s", good[i].text);
	}
	cr_assert(sb_publish_loopback(&(struct sb_publish){ "127.0.0.1", 1, 1 }));
	cr_assert_not(sb_publish_loopback(&(struct sb_publish){ "0.0.0.0", 1, 1 }));
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		cr_assert_eq(sb_publish_parse(&p, bad[i], &err), SB_ERR_INVALID, "'%s' accepted", bad[i]);
		cr_assert(strstr(err.msg, "--publish"), "%s", err.msg);
	}
	cr_assert_eq(sb_service_restart_parse("on-failure"), SB_RESTART_ON_FAILURE);
	cr_assert_eq(sb_service_restart_parse("sometimes"), -1);
	cr_assert_str_eq(sb_service_restart_name(SB_RESTART_ALWAYS), "always");
}

Test(record, paused_state_and_tiered_expiry_round_trip)
{
	struct sb_record rec = {
		.name = "tier", .id = "sb-00000000000000aa", .created = 1700000000, .image_ref = "busybox:test",
		.kind = SB_KIND_TEMPORARY, .idle_timeout = 600, .expiry_action = SB_EXPIRY_PAUSE,
		.expiry_stop_after = 7200, .exchange = 1, .owner = "", .state = SB_STATE_PAUSED, .reason = "expired",
		.state_changed = 1700000600, .backend = "runsc",
	};
	struct sb_record back;
	struct sb_error err;
	enum sb_expiry_action a;
	long long after;
	char buf[64];

	strcpy(rec.image_digest, "sha256:0000000000000000000000000000000000000000000000000000000000000002");
	json_t *doc = sb_record_to_json(&rec);
	cr_assert_not_null(doc);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "state")), "paused");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "expiry_action")), "pause");
	cr_assert_eq(json_integer_value(json_object_get(doc, "expiry_stop_after")), 7200);
	cr_assert_eq(sb_record_from_json(&back, doc, &err), 0, "%s", err.msg);
	cr_assert_eq(back.state, SB_STATE_PAUSED);
	cr_assert_eq(back.expiry_action, SB_EXPIRY_PAUSE);
	cr_assert_eq(back.expiry_stop_after, 7200);
	sb_record_clear(&back);

	/* a tier belongs to pause only; a record saying otherwise is refused, not guessed */
	json_object_set_new(doc, "expiry_action", json_string("rm"));
	cr_assert_eq(sb_record_from_json(&back, doc, &err), SB_ERR_FORMAT);
	cr_assert(strstr(err.msg, "expiry_stop_after"), "%s", err.msg);
	json_object_set_new(doc, "expiry_action", json_string("pause"));
	json_object_set_new(doc, "expiry_stop_after", json_string("2h"));
	cr_assert_eq(sb_record_from_json(&back, doc, &err), SB_ERR_FORMAT);
	/* without a tier the key is absent, as in every record from before */
	json_object_del(doc, "expiry_stop_after");
	cr_assert_eq(sb_record_from_json(&back, doc, &err), 0, "%s", err.msg);
	cr_assert_eq(back.expiry_stop_after, 0);
	json_t *again = sb_record_to_json(&back);
	cr_assert_null(json_object_get(again, "expiry_stop_after"));
	json_decref(again);
	sb_record_clear(&back);
	json_decref(doc);

	/* the spelling of --expiry and of the config's expiry_action */
	cr_assert_eq(sb_expiry_parse(&a, &after, "pause,stop=2h", NULL), 0);
	cr_assert_eq(a, SB_EXPIRY_PAUSE);
	cr_assert_eq(after, 7200);
	cr_assert_str_eq(sb_expiry_format(buf, sizeof(buf), a, after), "pause,stop=2h");
	cr_assert_str_eq(sb_expiry_format(buf, sizeof(buf), a, 90), "pause,stop=90s");
	cr_assert_eq(sb_expiry_parse(&a, &after, buf, NULL), 0);
	cr_assert_eq(after, 90);
	cr_assert_str_eq(sb_expiry_format(buf, sizeof(buf), a, 7200), "pause,stop=2h");
	cr_assert_eq(sb_expiry_parse(&a, &after, buf, NULL), 0, "the formatted spelling parses back");
	cr_assert_eq(after, 7200);
	cr_assert_eq(sb_expiry_parse(&a, &after, "pause", NULL), 0);
	cr_assert_eq(a, SB_EXPIRY_PAUSE);
	cr_assert_eq(after, 0);
	cr_assert_str_eq(sb_expiry_format(buf, sizeof(buf), a, after), "pause");
	cr_assert_eq(sb_expiry_parse(&a, &after, "stop", NULL), 0);
	cr_assert_eq(a, SB_EXPIRY_STOP);
	for (const char *const *bad = (const char *const[]){ "pause,stop=", "pause,stop=soon", "stop,stop=1h",
							      "pause,rm=1h", "default", "", NULL };
	     *bad; bad++) {
		cr_assert_eq(sb_expiry_parse(&a, &after, *bad, &err), SB_ERR_INVALID, "'%s' refused", *bad);
		cr_assert(strstr(err.msg, "pause,stop=DURATION"), "%s", err.msg);
	}
}
