/* The devices of a backend, for `belt info` and --device. */
#include <stdio.h>

#include "belt/error.h"
#include "belt/plugin.h"
#include "cli/cli.h"

int cli_devices(const char *backend, char *buf, size_t bufsz, char *err,
		size_t errsz)
{
	const struct belt_backend_ops *be = belt_backend_get(backend, err, errsz);
	if (!be)
		return -1;
	if (be->list_devices)
		return be->list_devices(buf, bufsz, err, errsz);
	if (bufsz)
		snprintf(buf, bufsz, "0: %s (default)\n", be->description ? be->description : be->name);
	return 1;
}

int cli_check_device(const char *cmd, const char *backend, long device)
{
	char err[CLI_ERR_SIZE];
	int n = cli_devices(backend, NULL, 0, err, sizeof err);
	if (n < 0)
		return cli_fail(err);
	if (device < n)
		return 0;
	if (n == 0)
		fprintf(stderr, "belt %s: --device %ld: the %s backend found no device\n", cmd, device,
			backend);
	else if (n == 1)
		fprintf(stderr, "belt %s: --device %ld: the %s backend has 1 device, index 0 (belt info lists it)\n",
			cmd, device, backend);
	else
		fprintf(stderr, "belt %s: --device %ld: the %s backend has %d devices, 0..%d (belt info lists them)\n",
			cmd, device, backend, n, n - 1);
	return CLI_USAGE;
}
