/** A directory of the host the guest mounts over 9p (virtio-9p-device, one per share). */
export interface GuestShare {
  /** The 9p mount tag: at most 31 characters. */
  tag: string;
  hostPath: string;
  guestPath: string;
  readOnly: boolean;
}

/** The names of the virtio-serial ports, as the guest finds them in /sys/class/virtio-ports. */
export const guestPorts = { control: 'paddock.control', api: 'paddock.api', egress: 'paddock.egress' };

export interface GuestInitInput {
  /** Module file names under /lib/modules of the initramfs, in load order. */
  modules: string[];
  shares: GuestShare[];
  /**
   * The uid (and gid) the supervisor runs as in the guest unless the kernel command line names one
   * (`paddock.uid=`, per boot): the owner of the workspace on the host.
   */
  uid: number;
  /** The supervisor's command line inside the guest (fixed paths only). */
  command: string[];
}

/**
 * The guest's /init (busybox sh, PID 1): loads the virtio and 9p modules, builds the root from the
 * host's shares on a tmpfs (the host's /usr and staged /etc read-only, the project's code read-only
 * at its host paths, the workspace read-write at /workspace), then starts the supervisor as its child,
 * root with only the capabilities to start processes as the sandbox uid (its \`--uid\`), its stdin
 * and stdout on the control port, and powers the VM off when it ends.
 * The guest has loopback only: the API and egress ports are handed to the supervisor, which serves
 * them on 127.0.0.1 like the bubblewrap sandbox's proxy sockets.
 */
export function guestInitScript(input: GuestInitInput): string {
  const q = shellQuote;
  const mounts = input.shares.map((share) => {
    const options = `trans=virtio,version=9p2000.L,msize=524288${share.readOnly ? ',ro' : ''}`;
    return `share ${q(share.tag)} ${q(share.guestPath)} ${q(options)}`;
  });
  const uid = String(input.uid);
  return `#!/bin/busybox sh
B=/bin/busybox
R=/newroot
fail() { echo "paddock-init: $*" >&2; $B poweroff -f; }
$B mount -t proc proc /proc
$B mount -t sysfs sys /sys
$B mount -t devtmpfs dev /dev
for m in ${input.modules.map(q).join(' ')}; do $B insmod /lib/modules/$m || fail "insmod $m"; done
port() {
  for p in /sys/class/virtio-ports/*; do
    [ "$($B cat $p/name 2>/dev/null)" = "$1" ] && { echo /dev/\${p##*/}; return 0; }
  done
  return 1
}
share() { $B mkdir -p "$R$2" && $B mount -t 9p -o "$3" "$1" "$R$2" || fail "mount $1 at $2"; }
$B mount -t tmpfs -o mode=0755 root $R
for d in bin lib lib64 sbin; do $B ln -s usr/$d $R/$d; done
$B mkdir -p $R/proc $R/dev $R/tmp $R/run/paddock
$B mount -t proc proc $R/proc
$B mount -t devtmpfs dev $R/dev
$B mkdir -p $R/dev/shm
$B mount -t tmpfs -o mode=1777 shm $R/dev/shm
$B mount -t tmpfs -o mode=1777 tmp $R/tmp
# The shares last, on top of the guest's own /tmp: the project's code may live under the host's /tmp.
${mounts.join('\n')}
$B ip link set lo up
control=$(port ${guestPorts.control}) || fail "no control port"
api=$(port ${guestPorts.api}) || fail "no api port"
egress=$(port ${guestPorts.egress}) || fail "no egress port"
uid=${uid}
for a in $($B cat /proc/cmdline); do case $a in paddock.uid=*) uid=\${a#paddock.uid=};; esac; done
case $uid in ''|*[!0-9]*) fail "bad uid";; esac
$B ln -s $api $R/run/paddock/api
$B ln -s $egress $R/run/paddock/egress
$B chroot $R /usr/bin/setpriv --inh-caps=-all --bounding-set=-all,+setuid,+setgid --no-new-privs -- \\
  /bin/sh -c 'cd /workspace && exec "$@"' paddock-supervisor \\
  ${input.command.map(q).join(' ')} --uid "$uid" 0<>$control 1>&0 2>/dev/console
$B poweroff -f
`;
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
