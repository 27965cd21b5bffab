#!/usr/bin/env bash
# tests/model/test_item_layout.sh - only the btree module knows the item
# layout (model/btree.h, issue 20): code outside it that names a field of
# struct btree_item does not compile under -Werror, code that goes through
# the btree_item_*() accessors does, and no file outside the module claims
# the layout (BTREE_ITEM_LAYOUT).
#
#   test_item_layout.sh SOURCE_ROOT CC [CC ARGS...]
. "$(dirname "$0")/../tap.sh"
src=$1; shift
cc=("$@")
cflags=$(pkg-config --cflags glib-2.0)

compiles() { # true when \$file compiles with -Werror
	# shellcheck disable=SC2086
	"${cc[@]}" -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE $cflags -I"$src/model" -fsyntax-only "$file" \
		>"$work/cc.out" 2>&1
}

cat >"$work/accessors.c" <<'C'
#include "btree.h"
uint64_t f(struct btree_item *item);
uint64_t f(struct btree_item *item)
{
	(*btree_item_value_for_write(item))++;
	btree_item_set_whiteout(item, !btree_item_is_whiteout(item));
	return btree_item_key(item)->objectid + btree_item_size(item) + btree_item_value(item);
}
C
file=$work/accessors.c
if compiles; then
	ok "the accessors compile outside the btree module"
else
	not_ok "the accessors compile outside the btree module" "$(cat "$work/cc.out")"
fi

for field in key.objectid size whiteout payload.value; do
	sed "s/return .*/return (uint64_t)item->$field;/" "$work/accessors.c" >"$work/field.c"
	file=$work/field.c
	if compiles; then
		not_ok "item->$field outside the btree module fails to compile" "it compiled"
	else
		check "item->$field outside the btree module fails to compile, naming the accessors" \
			'grep -q "use the btree_item_\*() accessors" "$work/cc.out"' "$(cat "$work/cc.out")"
	fi
done

claims=$(grep -rl --include='*.c' --include='*.h' 'define BTREE_ITEM_LAYOUT' "$src" |
	sed "s|^$src/||" | grep -v -x -e model/btree.c -e model/btree_check.c -e model/btree.h || true)
check "only btree.c and btree_check.c define BTREE_ITEM_LAYOUT" '[ -z "$claims" ]' "$claims"
tap_done
