"""Sources of files: image folders (labels from sub-folders, globs, limits, shuffles) and any
files by glob.
"""
