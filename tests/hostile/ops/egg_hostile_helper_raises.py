# Not an op: a local module that op local_helper_raises imports; it fails when imported.
1 / 0
