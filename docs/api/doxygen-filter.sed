# SPDX-License-Identifier: Apache-2.0
# docs/api/doxygen-filter.sed: Doxygen's INPUT_FILTER for the public headers. The headers'
# doc comments use gtk-doc's markers ("tw_span_start: summary", "@param: text", "@param"
# in running text, "Returns:", "Since:", "Thread safety:"); this maps them onto Doxygen's
# commands on the fly, line for line, so that the headers stay readable as they are and
# warnings keep their line numbers. It touches doc comments only in effect: the markers
# do not occur in code.
#
# The header's top comment ("/*" then " * tracewire/span.h: what it is") documents the file.
/^\/\*$/{
N
s#^/\*\n \* tracewire/[a-z_]*\.h: #/** \\file\n * #
}
# "name: " at the start of a doc comment, or of its first line: the brief is what follows.
s#^\(/\*\*[[:space:]]*\)tw_[a-z0-9_]*:[[:space:]]*#\1#
s#^\([[:space:]]*\*[[:space:]]\)tw_[a-z0-9_]*:[[:space:]]\{1,\}#\1#
# "@name: text" documents a parameter; "@name" elsewhere refers to one.
s#@\([a-z_][a-z0-9_]*\):#\\param \1#g
s#@\([a-z_][a-z0-9_]*\)#\\p \1#g
s#\\param \([a-z_][a-z0-9_]*\)#@param \1#g
# The section words.
s#Returns:#\\return#g
s#Since:#\\since#g
s#Thread safety:#\\threadsafety#g
