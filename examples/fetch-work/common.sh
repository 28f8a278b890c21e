# Shared by the hooks: where the spool is, and reading one attribute from ad text.
# The spool is $FETCH_WORK_SPOOL, else the directory `spool` next to these scripts.
SPOOL=${FETCH_WORK_SPOOL:-$(cd "$(dirname "$0")" && pwd)/spool}
mkdir -p "$SPOOL/queue" "$SPOOL/taken" "$SPOOL/done"

# attr NAME FILE: the value text of `NAME = value` in an old-style ad (quotes removed).
attr() {
  sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*//p" "$2" | head -n 1 | sed 's/^"\(.*\)"$/\1/'
}
