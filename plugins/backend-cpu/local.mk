# plugins/backend-cpu
