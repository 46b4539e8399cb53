# Sourced by the suites that play another local user against a root recorder (t70,
# t77, t78, t79): uids with no account and no process, which setpriv takes as they are.

free_uid() {	# free_uid FROM: the first free uid from FROM on, up to FROM + 99
	for _u in $(seq "$1" $(($1 + 99))); do
		getent passwd "$_u" >/dev/null 2>&1 && continue
		[ -n "$(ps -o pid= -u "$_u" 2>/dev/null)" ] && continue
		echo "$_u"
		return 0
	done
	return 1
}

# need_uids FROM: EVIL (the hostile user) and VICTIM (a user it harms), free uids from
# FROM and FROM + 100 on, and AS_EVIL and AS_VICTIM, the prefixes that run a command as
# them. A command, not a function: a function run in the background is a subshell, and
# $! would be its pid instead of the command's. Skips the suite when none is free.
need_uids() {
	EVIL=$(free_uid "$1")
	VICTIM=$(free_uid $(($1 + 100)))
	if [ -z "$EVIL" ] || [ -z "$VICTIM" ]; then
		echo "1..0 # SKIP no free uids in $1..$(($1 + 199))"
		exit 0
	fi
	AS_EVIL="setpriv --reuid=$EVIL --regid=$EVIL --clear-groups"
	AS_VICTIM="setpriv --reuid=$VICTIM --regid=$VICTIM --clear-groups"
}
