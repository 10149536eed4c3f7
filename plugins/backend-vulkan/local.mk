# plugins/backend-vulkan (built only when configure finds Vulkan and glslc)
