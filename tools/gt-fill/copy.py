#!/usr/bin/env python3
# copy SRC to DST in os.walk order (top-down), mode: fsync (write+fsync each file), empty (create files with no data), plain (write, no fsync)
import os, sys, shutil
src, dst, mode = sys.argv[1], sys.argv[2], sys.argv[3]
for root, dirs, files in os.walk(src):
    rel = os.path.relpath(root, src)
    d = os.path.join(dst, rel) if rel != '.' else dst
    os.makedirs(d, exist_ok=True)
    for name in dirs:
        p = os.path.join(root, name)
        if os.path.islink(p):
            os.symlink(os.readlink(p), os.path.join(d, name))
    for name in files:
        p = os.path.join(root, name); q = os.path.join(d, name)
        if os.path.islink(p):
            os.symlink(os.readlink(p), q); continue
        with open(q, 'wb') as f:
            if mode != 'empty':
                with open(p, 'rb') as g: f.write(g.read())
                if mode == 'fsync':
                    f.flush(); os.fsync(f.fileno())
