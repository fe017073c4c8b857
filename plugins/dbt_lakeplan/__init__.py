plugins = []
