#include "config.h"

#include <stdarg.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "base/mhd_dl.h"
#include "internal.h"

static struct {
	struct MHD_Daemon *(*start_daemon_va)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
					       MHD_AccessHandlerCallback, void *, va_list);
	void (*stop_daemon)(struct MHD_Daemon *);
	enum MHD_Result (*run)(struct MHD_Daemon *);
	enum MHD_Result (*get_timeout)(struct MHD_Daemon *, MHD_UNSIGNED_LONG_LONG *);
	const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...);
	const char *(*lookup_connection_value)(struct MHD_Connection *, enum MHD_ValueKind, const char *);
	struct MHD_Response *(*create_response_from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
	struct MHD_Response *(*create_response_from_callback)(uint64_t, size_t, MHD_ContentReaderCallback, void *,
							      MHD_ContentReaderFreeCallback);
	enum MHD_Result (*add_response_header)(struct MHD_Response *, const char *, const char *);
	enum MHD_Result (*queue_response)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
	void (*destroy_response)(struct MHD_Response *);
	void (*suspend_connection)(struct MHD_Connection *);
	void (*resume_connection)(struct MHD_Connection *);
} api;

static const struct sb_dynlib_symbol symbols[] = {
	{ "MHD_start_daemon_va", (void **)&api.start_daemon_va },
	{ "MHD_stop_daemon", (void **)&api.stop_daemon },
	{ "MHD_run", (void **)&api.run },
	{ "MHD_get_timeout", (void **)&api.get_timeout },
	{ "MHD_get_daemon_info", (void **)&api.get_daemon_info },
	{ "MHD_lookup_connection_value", (void **)&api.lookup_connection_value },
	{ "MHD_create_response_from_buffer", (void **)&api.create_response_from_buffer },
	{ "MHD_create_response_from_callback", (void **)&api.create_response_from_callback },
	{ "MHD_add_response_header", (void **)&api.add_response_header },
	{ "MHD_queue_response", (void **)&api.queue_response },
	{ "MHD_destroy_response", (void **)&api.destroy_response },
	{ "MHD_suspend_connection", (void **)&api.suspend_connection },
	{ "MHD_resume_connection", (void **)&api.resume_connection },
};

static struct sb_dynlib lib = { "libmicrohttpd.so.12", "libmicrohttpd12", symbols, sizeof(symbols) / sizeof(symbols[0]),
				0, "" };

int sb_mhd_load(struct sb_error *err)
{
	return sb_dynlib_load(&lib, err);
}

SB_DYNLIB_FORWARDER struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
							 void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	struct MHD_Daemon *d;
	va_list ap;

	if (sb_mhd_load(NULL) < 0)
		return NULL;
	va_start(ap, dh_cls);
	d = api.start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

SB_DYNLIB_FORWARDER void MHD_stop_daemon(struct MHD_Daemon *daemon)
{
	api.stop_daemon(daemon);
}

SB_DYNLIB_FORWARDER enum MHD_Result MHD_run(struct MHD_Daemon *daemon)
{
	return api.run(daemon);
}

SB_DYNLIB_FORWARDER enum MHD_Result MHD_get_timeout(struct MHD_Daemon *daemon, MHD_UNSIGNED_LONG_LONG *timeout)
{
	return api.get_timeout(daemon, timeout);
}

/* the info types sandbench asks for take no further argument */
SB_DYNLIB_FORWARDER const union MHD_DaemonInfo *MHD_get_daemon_info(struct MHD_Daemon *daemon,
								    enum MHD_DaemonInfoType info_type, ...)
{
	return api.get_daemon_info(daemon, info_type);
}

SB_DYNLIB_FORWARDER const char *MHD_lookup_connection_value(struct MHD_Connection *connection, enum MHD_ValueKind kind,
							    const char *key)
{
	return api.lookup_connection_value(connection, kind, key);
}

SB_DYNLIB_FORWARDER struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
									  enum MHD_ResponseMemoryMode mode)
{
	return api.create_response_from_buffer(size, buffer, mode);
}

SB_DYNLIB_FORWARDER struct MHD_Response *MHD_create_response_from_callback(uint64_t size, size_t block_size,
									    MHD_ContentReaderCallback crc, void *crc_cls,
									    MHD_ContentReaderFreeCallback crfc)
{
	return api.create_response_from_callback(size, block_size, crc, crc_cls, crfc);
}

SB_DYNLIB_FORWARDER enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header,
							    const char *content)
{
	return api.add_response_header(response, header, content);
}

SB_DYNLIB_FORWARDER enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
						       struct MHD_Response *response)
{
	return api.queue_response(connection, status_code, response);
}

SB_DYNLIB_FORWARDER void MHD_destroy_response(struct MHD_Response *response)
{
	api.destroy_response(response);
}

SB_DYNLIB_FORWARDER void MHD_suspend_connection(struct MHD_Connection *connection)
{
	api.suspend_connection(connection);
}

SB_DYNLIB_FORWARDER void MHD_resume_connection(struct MHD_Connection *connection)
{
	api.resume_connection(connection);
}
