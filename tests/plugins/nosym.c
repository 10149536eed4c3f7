/* A module without belt_plugin_entry: the loader must say so. */
int belt_not_a_plugin(void);
int belt_not_a_plugin(void)
{
	return 42;
}
