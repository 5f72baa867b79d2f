//! A bisection's kernel tree: a git worktree of its own (never the user's checkout),
//! `git bisect` driven in it, and each commit's build kept by commit so that no commit is
//! built twice.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What went wrong with git or a build directory.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    /// The user's input: a directory that is no git repository, a revision git does
    /// not know.
    #[error("{0}")]
    Usage(String),
    #[error("git {args}: {message}")]
    Git { args: String, message: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl TreeError {
    pub fn is_usage(&self) -> bool {
        matches!(self, TreeError::Usage(_))
    }
}

/// Runs git in `dir`; its standard output, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> Result<String, TreeError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| TreeError::Usage(format!("cannot run git ({e}): install git")))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        return Err(TreeError::Git {
            args: args.join(" "),
            message: format!("{} ({})", stderr.trim(), stdout.trim()),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The commit `rev` names in the repository at `repo`, in full.
pub fn commit_of(repo: &Path, rev: &str) -> Result<String, TreeError> {
    git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map_err(|_| TreeError::Usage(format!("{}: no commit {rev}", repo.display())))
}

/// The repository's common git directory (shared by its worktrees), absolute.
pub fn common_dir(repo: &Path) -> Result<PathBuf, TreeError> {
    let dir = git(
        repo,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
    .map_err(|_| TreeError::Usage(format!("{}: not a git repository", repo.display())))?;
    Ok(PathBuf::from(dir))
}

/// A commit's subject line.
pub fn subject(repo: &Path, commit: &str) -> Result<String, TreeError> {
    git(repo, &["log", "-1", "--format=%s", commit])
}

/// A commit's first parent, if it has one.
pub fn parent(repo: &Path, commit: &str) -> Option<String> {
    git(
        repo,
        &["rev-parse", "--verify", "--quiet", &format!("{commit}^")],
    )
    .ok()
}

/// How many commits `good..bad` holds: the candidates of a bisection.
pub fn commits_between(repo: &Path, good: &str, bad: &str) -> Result<usize, TreeError> {
    let count = git(repo, &["rev-list", "--count", &format!("{good}..{bad}")])?;
    count.parse().map_err(|_| TreeError::Git {
        args: "rev-list --count".into(),
        message: format!("not a count: {count}"),
    })
}

/// Whether `ancestor` is an ancestor of `commit`.
pub fn is_ancestor(repo: &Path, ancestor: &str, commit: &str) -> bool {
    git(repo, &["merge-base", "--is-ancestor", ancestor, commit]).is_ok()
}

/// Where each of `revs` stands along the repository's history: its position in the
/// topological order, oldest first, of the commits from their common ancestor to them.
/// Keyed by the revisions as given; a revision git does not know is a usage error.
pub fn history_positions(
    repo: &Path,
    revs: &[String],
) -> Result<std::collections::BTreeMap<String, usize>, TreeError> {
    let commits: Vec<String> = revs
        .iter()
        .map(|rev| commit_of(repo, rev))
        .collect::<Result<_, _>>()?;
    let mut args: Vec<&str> = vec!["rev-list", "--topo-order", "--reverse"];
    args.extend(commits.iter().map(String::as_str));
    // From the common ancestor on: a kernel tree's whole history is a million commits.
    let mut base_args = vec!["merge-base", "--octopus"];
    base_args.extend(commits.iter().map(String::as_str));
    let base = git(repo, &base_args).ok();
    let not_base = base.as_ref().map(|b| format!("^{b}"));
    args.extend(not_base.as_deref());
    let listed = git(repo, &args)?;
    let order: std::collections::HashMap<&str, usize> = base
        .as_deref()
        .into_iter()
        .chain(listed.lines())
        .enumerate()
        .map(|(i, c)| (c, i))
        .collect();
    Ok(revs
        .iter()
        .zip(&commits)
        .map(|(rev, commit)| {
            (
                rev.clone(),
                order.get(commit.as_str()).copied().unwrap_or(0),
            )
        })
        .collect())
}

/// Where a bisection stands after git has been told of a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BisectState {
    /// The next commit to test (checked out in the worktree).
    Test(String),
    /// The first bad commit.
    Found(String),
    /// Only skipped commits are left: the first bad commit is one of these.
    OnlySkipped(Vec<String>),
}

/// What a commit is, to `git bisect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Good,
    Bad,
    Skip,
}

impl Mark {
    fn word(self) -> &'static str {
        match self {
            Mark::Good => "good",
            Mark::Bad => "bad",
            Mark::Skip => "skip",
        }
    }
}

/// What git says when only skipped commits are left to test.
const ONLY_SKIPPED: &str = "only 'skip'ped commits left";

/// A git worktree that a bisection owns.
#[derive(Debug, Clone)]
pub struct Worktree {
    pub path: PathBuf,
}

impl Worktree {
    /// The worktree at `path` of the repository at `repo`, made (detached at `commit`)
    /// unless it is there already.
    pub fn open_or_add(repo: &Path, path: &Path, commit: &str) -> Result<Worktree, TreeError> {
        if !path.join(".git").exists() {
            let path_text = path.to_string_lossy();
            git(
                repo,
                &["worktree", "add", "--force", "--detach", &path_text, commit],
            )?;
        }
        Ok(Worktree {
            path: path.to_path_buf(),
        })
    }

    /// Starts a bisection of `good..bad` afresh (any earlier one in this worktree is
    /// reset first): the first commit to test, checked out.
    pub fn bisect_start(&self, good: &str, bad: &str) -> Result<BisectState, TreeError> {
        // A bisection left by a killed kbench: its marks are replayed from the store.
        let _ = git(&self.path, &["bisect", "reset", "--quiet"]);
        let out = git(&self.path, &["bisect", "start", bad, good])?;
        self.state_after(&out)
    }

    /// Tells git what the checked-out commit is; where the bisection goes next.
    pub fn mark(&self, mark: Mark) -> Result<BisectState, TreeError> {
        match git(&self.path, &["bisect", mark.word()]) {
            Ok(out) => self.state_after(&out),
            // git ends a bisection that only skipped commits can finish with a failure.
            Err(TreeError::Git { message, .. }) if message.contains(ONLY_SKIPPED) => {
                self.state_after(&message)
            }
            Err(e) => Err(e),
        }
    }

    /// `git bisect log`: every mark, as git can replay it.
    pub fn log(&self) -> Result<String, TreeError> {
        git(&self.path, &["bisect", "log"])
    }

    fn state_after(&self, out: &str) -> Result<BisectState, TreeError> {
        if let Some(line) = out
            .lines()
            .find(|l| l.ends_with(" is the first bad commit"))
        {
            let commit = line.split_whitespace().next().unwrap_or_default();
            return Ok(BisectState::Found(commit.to_string()));
        }
        if out.contains(ONLY_SKIPPED) {
            let commits = out
                .lines()
                .filter_map(|l| l.split_whitespace().next())
                .filter(|w| w.len() == 40 && w.chars().all(|c| c.is_ascii_hexdigit()))
                .map(String::from)
                .collect();
            return Ok(BisectState::OnlySkipped(commits));
        }
        Ok(BisectState::Test(git(&self.path, &["rev-parse", "HEAD"])?))
    }
}

/// A commit's build as kept: its kernel image and the words its build asked for the
/// kernel's command line, or why it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Build {
    Built {
        image: PathBuf,
        cmdline_words: Vec<String>,
    },
    Failed {
        reason: String,
    },
}

/// Each commit's build, kept in `dir/<commit>`: `image` and `cmdline` as the build
/// command left them in `$KBENCH_OUT`, or `failed` with the reason, and the build's
/// output in `build.log` either way.
#[derive(Debug, Clone)]
pub struct BuildCache {
    pub dir: PathBuf,
}

impl BuildCache {
    /// The build of `commit` if it was made before.
    pub fn get(&self, commit: &str) -> Option<Build> {
        let dir = self.dir.join(commit);
        if let Ok(reason) = std::fs::read_to_string(dir.join("failed")) {
            return Some(Build::Failed { reason });
        }
        let image = dir.join("image");
        image.is_file().then(|| Build::Built {
            cmdline_words: cmdline_words(&dir),
            image,
        })
    }

    /// The build of `commit`, made by `command` (`sh -c` in `worktree`, with `KBENCH_REV`
    /// the commit and `KBENCH_OUT` an empty directory) unless it is kept. The second
    /// value says whether it was built now.
    pub fn build(
        &self,
        commit: &str,
        command: &str,
        worktree: &Worktree,
    ) -> Result<(Build, bool), TreeError> {
        if let Some(kept) = self.get(commit) {
            return Ok((kept, false));
        }
        git(&worktree.path, &["checkout", "--quiet", "--detach", commit])?;
        // Built into a directory of its own and renamed when whole: a build killed
        // half-way leaves nothing that looks kept.
        let partial = self.dir.join(format!("{commit}.partial"));
        let _ = std::fs::remove_dir_all(&partial);
        let out = partial.join("out");
        std::fs::create_dir_all(&out)?;
        let log = std::fs::File::create(partial.join("build.log"))?;
        let status = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&worktree.path)
            .env("KBENCH_REV", commit)
            .env("KBENCH_OUT", &out)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .status()?;
        let reason = if !status.success() {
            Some(format!("the build exited with {status}"))
        } else if !out.join("image").is_file() {
            Some("the build left no $KBENCH_OUT/image".to_string())
        } else {
            None
        };
        match &reason {
            Some(reason) => std::fs::write(partial.join("failed"), reason)?,
            None => {
                std::fs::rename(out.join("image"), partial.join("image"))?;
                if out.join("cmdline").is_file() {
                    std::fs::rename(out.join("cmdline"), partial.join("cmdline"))?;
                }
            }
        }
        let _ = std::fs::remove_dir_all(&out);
        let kept = self.dir.join(commit);
        std::fs::rename(&partial, &kept)?;
        let build = self.get(commit).ok_or_else(|| {
            TreeError::Io(std::io::Error::other(format!(
                "{}: the build just kept is not there",
                kept.display()
            )))
        })?;
        Ok((build, true))
    }

    /// The tail of a commit's build output, for a failure's reason.
    pub fn log_tail(&self, commit: &str, lines: usize) -> String {
        let text =
            std::fs::read_to_string(self.dir.join(commit).join("build.log")).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

/// The words of `dir/cmdline`, split at white space.
fn cmdline_words(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("cmdline"))
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository of `n` commits, each writing its number into `n`; commit ids in
    /// order.
    fn repository(dir: &Path, n: usize) -> Vec<String> {
        let run = |args: &[&str]| git(dir, args).unwrap();
        run(&["init", "--quiet", "-b", "main"]);
        run(&["config", "user.email", "t@example.org"]);
        run(&["config", "user.name", "t"]);
        (0..n)
            .map(|i| {
                std::fs::write(dir.join("n"), i.to_string()).unwrap();
                run(&["add", "n"]);
                run(&["commit", "--quiet", "-m", &format!("commit {i}")]);
                run(&["rev-parse", "HEAD"])
            })
            .collect()
    }

    #[test]
    fn git_bisect_is_driven_to_the_first_bad_commit_in_a_worktree_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        let commits = repository(&repo, 9);
        let wt = Worktree::open_or_add(&repo, &dir.path().join("wt"), &commits[8]).unwrap();
        assert_eq!(commits_between(&repo, &commits[0], &commits[8]).unwrap(), 8);
        // Commit 5 is the first bad one; 6 cannot be tested.
        let mut state = wt.bisect_start(&commits[0], &commits[8]).unwrap();
        let mut tested = 0;
        while let BisectState::Test(c) = &state {
            let i = commits.iter().position(|x| x == c).unwrap();
            let mark = match i {
                6 => Mark::Skip,
                i if i >= 5 => Mark::Bad,
                _ => Mark::Good,
            };
            state = wt.mark(mark).unwrap();
            tested += 1;
        }
        assert_eq!(
            state,
            BisectState::Found(commits[5].clone()),
            "{tested} tested"
        );
        assert!(wt.log().unwrap().contains("# first bad commit"));
        assert_eq!(subject(&repo, &commits[5]).unwrap(), "commit 5");
        assert_eq!(
            parent(&repo, &commits[5]).as_deref(),
            Some(commits[4].as_str())
        );
        // The user's checkout is where it was.
        assert_eq!(git(&repo, &["rev-parse", "HEAD"]).unwrap(), commits[8]);
        assert!(commit_of(&repo, "no-such-rev").unwrap_err().is_usage());

        // With 4 untestable too, 4 and 5 are both the first bad commit as far as git
        // can tell.
        let mut state = wt.bisect_start(&commits[0], &commits[8]).unwrap();
        while let BisectState::Test(c) = &state {
            let i = commits.iter().position(|x| x == c).unwrap();
            state = wt
                .mark(match i {
                    4 | 6 => Mark::Skip,
                    i if i >= 5 => Mark::Bad,
                    _ => Mark::Good,
                })
                .unwrap();
        }
        let BisectState::OnlySkipped(mut ones) = state else {
            panic!("{state:?}")
        };
        ones.sort();
        let mut expected = vec![commits[4].clone(), commits[5].clone()];
        expected.sort();
        assert_eq!(ones, expected);
    }

    #[test]
    fn a_build_is_kept_by_commit_and_a_failed_one_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        let commits = repository(&repo, 3);
        let wt = Worktree::open_or_add(&repo, &dir.path().join("wt"), &commits[2]).unwrap();
        let cache = BuildCache {
            dir: dir.path().join("builds"),
        };
        // Commit 1 fails; the others leave an image and two words.
        let command = r#"test "$(cat n)" != 1 && cp n "$KBENCH_OUT/image" && echo "a=1  b" > "$KBENCH_OUT/cmdline" && echo built >> "$KBENCH_OUT/../../../count""#;
        std::fs::create_dir_all(&cache.dir).unwrap();
        let (build, built) = cache.build(&commits[0], command, &wt).unwrap();
        assert!(built);
        let Build::Built {
            image,
            cmdline_words,
        } = build
        else {
            panic!("{build:?}")
        };
        assert_eq!(std::fs::read_to_string(image).unwrap(), "0");
        assert_eq!(cmdline_words, ["a=1", "b"]);
        let (again, built) = cache.build(&commits[0], command, &wt).unwrap();
        assert!(!built, "kept: {again:?}");
        let (failed, _) = cache.build(&commits[1], command, &wt).unwrap();
        assert!(
            matches!(&failed, Build::Failed { reason } if reason.contains("exited")),
            "{failed:?}"
        );
        assert_eq!(cache.get(&commits[1]), Some(failed));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("count")).unwrap(),
            "built\n",
            "one build of commit 0"
        );
    }
}
