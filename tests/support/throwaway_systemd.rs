//! A real systemd, booted as PID 1 of its own namespaces in a throwaway
//! root, for `tests/live_systemd.rs`: the unit and its sockets run there as
//! on a server, and this machine's files never see it.
//!
//! Why the care: systemd's boot-time clean-up (`systemd-tmpfiles --boot
//! --remove`) empties `/tmp`, and its units set kernel parameters, load
//! modules, trigger devices and set the clock. Booted against this
//! machine's own root it would wipe the real `/tmp` (a CI checkout
//! included). So, as [`Throwaway::boot`] does it:
//!
//! - the root is an overlay whose lower layer is `/` (read-only) and whose
//!   writes go to a tmpfs that lives in a private mount namespace only;
//! - `/tmp`, `/var/tmp` and `/run` are fresh tmpfs inside it;
//! - it gets its own mount, PID, cgroup, network (loopback only), UTS and
//!   IPC namespaces;
//! - the units that would reach the kernel, devices, clock or network are
//!   masked, and it boots a target that wants nothing beyond `sysinit`;
//! - its processes live in a cgroup made for it below this process's own
//!   (on every hierarchy: these machines mount cgroups v1 beside a v2
//!   `unified` one), which is emptied and removed when it is dropped.
//!
//! The folder handed to `boot` is copied into the root as `/live`: the
//! root shows none of this machine's `/tmp`, `/var/tmp` or `/run`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use super::wait;

/// Units masked inside: each would act on this machine (kernel settings,
/// modules, devices, the clock, the network, mounts, entropy) or start
/// something a test does not need.
const MASKED: &[&str] = &[
    "systemd-udevd.service",
    "systemd-udevd-control.socket",
    "systemd-udevd-kernel.socket",
    "systemd-udev-trigger.service",
    "systemd-udev-settle.service",
    "systemd-hwdb-update.service",
    "kmod-static-nodes.service",
    "systemd-modules-load.service",
    "systemd-sysctl.service",
    "systemd-binfmt.service",
    "proc-sys-fs-binfmt_misc.automount",
    "proc-sys-fs-binfmt_misc.mount",
    "systemd-random-seed.service",
    "systemd-remount-fs.service",
    "systemd-fsck-root.service",
    "systemd-timesyncd.service",
    "systemd-time-wait-sync.service",
    "systemd-networkd.service",
    "systemd-networkd-wait-online.service",
    "systemd-network-generator.service",
    "systemd-resolved.service",
    "systemd-firstboot.service",
    "systemd-machine-id-commit.service",
    "sys-kernel-config.mount",
    "sys-kernel-debug.mount",
    "sys-kernel-tracing.mount",
    "sys-fs-fuse-connections.mount",
    "dev-hugepages.mount",
    "apt-daily.timer",
    "apt-daily-upgrade.timer",
    "e2scrub_all.timer",
    "fstrim.timer",
    "logrotate.timer",
    "man-db.timer",
];

/// What the private mount namespace runs: it lays out the root, then
/// becomes the new namespaces' first process, which becomes systemd.
/// Arguments: the tmpfs mount point, the folder to copy in as `/live`, the
/// cgroup folders to join (one per hierarchy), then the units to mask.
const BOOT: &str = r#"
set -eu
layer=$1 share=$2 groups=$3; shift 3
for g in $groups; do echo $$ > "$g/cgroup.procs"; done
mount -t tmpfs -o mode=0755 throwaway-systemd "$layer"
mkdir "$layer/upper" "$layer/work" "$layer/root"
mount -t overlay throwaway-systemd -o "lowerdir=/,upperdir=$layer/upper,workdir=$layer/work" "$layer/root"
root=$layer/root
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mount -t tmpfs -o mode=1777 tmpfs "$root/var/tmp"
mount -t tmpfs -o mode=0755 tmpfs "$root/run"
mount --rbind /dev "$root/dev"
cp -a "$share" "$root/live"
units=$root/etc/systemd/system
mkdir -p "$units"
for unit in "$@"; do ln -sfn /dev/null "$units/$unit"; done
printf '[Unit]\nDescription=A throwaway root for a test\nRequires=sysinit.target\nAfter=sysinit.target\nAllowIsolate=yes\n' > "$units/throwaway.target"
echo throwaway > "$root/etc/hostname"
exec unshare --pid --fork --cgroup --uts --ipc --net --mount-proc="$root/proc" \
  chroot "$root" env container=other /lib/systemd/systemd --unit=throwaway.target
"#;

/// A booted systemd in its throwaway root; dropped, it is killed and its
/// cgroups removed.
pub struct Throwaway {
    /// Holds the layer's mount point and the booting process's log.
    dir: PathBuf,
    booter: Child,
    /// systemd, as this machine's PID namespace numbers it.
    pid1: u32,
    /// The cgroup made for it on each hierarchy.
    groups: Vec<PathBuf>,
}

impl Throwaway {
    /// Boots systemd with `share` copied in as `/live`, and waits until it
    /// says it is running (or degraded: a unit failed, which a test reads
    /// from the journal itself).
    pub fn boot(share: &Path) -> Throwaway {
        let name = format!("citizen-throwaway-{}", std::process::id());
        let dir = std::env::temp_dir().join(&name);
        std::fs::create_dir_all(dir.join("layer")).unwrap();
        let groups = own_cgroups()
            .into_iter()
            .map(|own| {
                let group = own.join(&name);
                std::fs::create_dir_all(&group)
                    .unwrap_or_else(|e| panic!("making cgroup {}: {e}", group.display()));
                // A v1 cpuset group takes no process until it has CPUs and
                // memory nodes: its parent's.
                for file in ["cpuset.cpus", "cpuset.mems"] {
                    if let Ok(value) = std::fs::read_to_string(own.join(file)) {
                        std::fs::write(group.join(file), value.trim()).unwrap();
                    }
                }
                group
            })
            .collect::<Vec<_>>();
        let log = std::fs::File::create(dir.join("boot.log")).unwrap();
        let joined = groups
            .iter()
            .map(|g| g.display().to_string())
            .collect::<Vec<_>>()
            .join(" ");
        let booter = Command::new("unshare")
            .args([
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                BOOT,
                "boot",
            ])
            .arg(dir.join("layer"))
            .arg(share)
            .arg(joined)
            .args(MASKED)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("unshare runs (util-linux)");
        let mut booted = Throwaway {
            dir,
            booter,
            pid1: 0,
            groups,
        };
        // Found, or the booter gave up.
        wait(20, || {
            booted.pid1 = first_of_namespace(booted.booter.id()).unwrap_or(0);
            booted.pid1 != 0 || !matches!(booted.booter.try_wait(), Ok(None))
        });
        assert!(booted.pid1 != 0, "systemd did not start:\n{}", booted.log());
        // Its network namespace starts with loopback down.
        booted.inside(&["ip", "link", "set", "lo", "up"]);
        let mut state = String::new();
        let up = wait(90, || {
            let out = booted.inside(&["systemctl", "is-system-running"]);
            state = String::from_utf8_lossy(&out.stdout).trim().to_string();
            state == "running" || state == "degraded"
        });
        assert!(
            up,
            "systemd is still {state:?} after 90 s:\n{}",
            booted.log()
        );
        booted
    }

    /// Runs `command` inside (every namespace and the root), as root.
    pub fn inside(&self, command: &[&str]) -> Output {
        self.enter()
            .args(command)
            .output()
            .expect("nsenter runs (util-linux)")
    }

    /// `nsenter` into every namespace and the root, its command to add.
    pub fn enter(&self) -> Command {
        let mut cmd = Command::new("nsenter");
        cmd.current_dir("/")
            .args(["-t", &self.pid1.to_string()])
            .args(["-m", "-p", "-u", "-i", "-n", "-C", "--root", "--wd"]);
        cmd
    }

    /// Runs `command` inside as [`Throwaway::inside`] does, killed after
    /// `secs` seconds: whether it succeeded, and what it printed (both
    /// streams).
    pub fn run(&self, command: &[&str], secs: u64) -> (bool, String) {
        let out_path = self.dir.join("run.out");
        let out = std::fs::File::create(&out_path).unwrap();
        let mut child = self
            .enter()
            .args(command)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("nsenter runs (util-linux)");
        let ended = wait(secs, || !matches!(child.try_wait(), Ok(None)));
        if !ended {
            let _ = child.kill();
        }
        let status = child.wait().unwrap();
        let mut said = std::fs::read_to_string(&out_path).unwrap_or_default();
        if !ended {
            said.push_str(&format!("\n(killed after {secs} s)\n"));
        }
        (ended && status.success(), said)
    }

    /// What the booting process printed.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("boot.log")).unwrap_or_default()
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        // Every process of a PID namespace dies with its first.
        if self.pid1 != 0 {
            // SAFETY: kill(2) has no memory preconditions.
            unsafe { libc::kill(self.pid1 as i32, libc::SIGKILL) };
        }
        // The booter (`unshare --fork`) reaps systemd and exits with it;
        // killed first, it would leave systemd a zombie.
        wait(10, || !matches!(self.booter.try_wait(), Ok(None)));
        let _ = self.booter.kill();
        let _ = self.booter.wait();
        wait(10, || !self.groups.iter().any(|g| holds_processes(g)));
        for group in &self.groups {
            remove_tree(group);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// This process's cgroup folder on each mounted hierarchy (v1 controllers,
/// v1 named, v2), from /proc/self/cgroup and the mount table.
fn own_cgroups() -> Vec<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let mut found = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (
            parts.next(),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or("/"),
        );
        let wanted: Vec<&str> = controllers.split(',').filter(|c| !c.is_empty()).collect();
        let mount = mounts.lines().find_map(|m| {
            let (left, right) = m.split_once(" - ")?;
            let mut right = right.split(' ');
            let (fstype, _source, options) = (right.next()?, right.next()?, right.next()?);
            let left: Vec<&str> = left.split(' ').collect();
            let (root, point) = (left.get(3)?, left.get(4)?);
            let fits = if wanted.is_empty() {
                fstype == "cgroup2"
            } else {
                let options: Vec<&str> = options.split(',').collect();
                fstype == "cgroup" && wanted.iter().all(|c| options.contains(c))
            };
            fits.then(|| (root.to_string(), PathBuf::from(point)))
        });
        if let Some((root, point)) = mount {
            let inner = path.strip_prefix(root.as_str()).unwrap_or(path);
            found.push(point.join(inner.trim_start_matches('/')));
        }
    }
    assert!(!found.is_empty(), "no cgroup hierarchy is mounted");
    found
}

/// The process numbered 1 in its own PID namespace among the descendants
/// of `ancestor`.
fn first_of_namespace(ancestor: u32) -> Option<u32> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let first = status
            .lines()
            .find_map(|l| l.strip_prefix("NSpid:"))
            .is_some_and(|ids| {
                ids.split_whitespace().count() > 1 && ids.split_whitespace().last() == Some("1")
            });
        if first && descends_from(pid, ancestor) {
            return Some(pid);
        }
    }
    None
}

fn descends_from(mut pid: u32, ancestor: u32) -> bool {
    while pid > 1 {
        if pid == ancestor {
            return true;
        }
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            return false;
        };
        pid = status
            .lines()
            .find_map(|l| l.strip_prefix("PPid:"))
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or(0);
    }
    false
}

/// Whether `group` or a group below it has a process.
fn holds_processes(group: &Path) -> bool {
    let procs = std::fs::read_to_string(group.join("cgroup.procs")).unwrap_or_default();
    !procs.trim().is_empty()
        || std::fs::read_dir(group)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.path().is_dir() && holds_processes(&e.path()))
}

/// Removes `group` and the groups systemd made below it, deepest first.
fn remove_tree(group: &Path) {
    for entry in std::fs::read_dir(group).into_iter().flatten().flatten() {
        if entry.path().is_dir() {
            remove_tree(&entry.path());
        }
    }
    let _ = std::fs::remove_dir(group);
}
