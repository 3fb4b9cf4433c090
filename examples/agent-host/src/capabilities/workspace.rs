//! `workspace`: files inside the run's workspace directory.

use std::io::Write;
use std::path::Path;

use capspec::{CapError, CapResult, Run, capability};

use crate::generated::workspace as spec;
use crate::workspace::Workspace;

#[capability(spec::read_file)]
async fn read_file(run: &Run, args: spec::read_file::Args) -> CapResult<spec::read_file::Output> {
    let ws = Workspace::of(run)?;
    let text = std::fs::read_to_string(ws.resolve(&args.path)?).map_err(|e| CapError::new(format!("cannot read `{}`: {e}", args.path)))?;
    let lines: Vec<&str> = text.lines().collect();
    let offset = args.offset.max(0) as usize;
    let limit = args.limit.map(|l| l.max(1) as usize).unwrap_or(usize::MAX);
    let end = offset.saturating_add(limit).min(lines.len());
    let start = offset.min(lines.len());
    let mut content = lines[start..end].join("\n");
    if end > start && (end < lines.len() || text.ends_with('\n')) {
        content.push('\n');
    }
    Ok(spec::read_file::Output { content, total_lines: lines.len() as i64, truncated: end < lines.len() || start > 0 })
}

/// The largest image `view_image` returns.
const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

#[capability(spec::view_image)]
async fn view_image(run: &Run, args: spec::view_image::Args) -> CapResult<spec::view_image::Output> {
    let ws = Workspace::of(run)?;
    let path = ws.resolve(&args.path)?;
    let size = std::fs::metadata(&path).map_err(|e| CapError::new(format!("cannot read `{}`: {e}", args.path)))?.len();
    if size > MAX_IMAGE_BYTES {
        return Err(CapError::new(format!("`{}` is {size} bytes; images are limited to {MAX_IMAGE_BYTES} bytes (5 MiB)", args.path)));
    }
    let bytes = std::fs::read(&path).map_err(|e| CapError::new(format!("cannot read `{}`: {e}", args.path)))?;
    if capspec::content::sniff(&bytes).is_none() {
        return Err(CapError::new(format!("`{}` is not a PNG, JPEG, GIF or WebP image (by its bytes)", args.path)));
    }
    Ok(spec::view_image::Output { image: bytes.into(), size: size as i64 })
}

#[capability(spec::list_files)]
async fn list_files(run: &Run, args: spec::list_files::Args) -> CapResult<spec::list_files::Output> {
    let ws = Workspace::of(run)?;
    let dir = ws.resolve(&args.path)?;
    let kind = args.kind;
    let mut entries = Vec::new();
    collect(ws, &dir, args.recursive, kind, &mut entries)?;
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(spec::list_files::Output { entries })
}

fn collect(ws: &Workspace, dir: &Path, recursive: bool, kind: spec::list_files::Kind, out: &mut Vec<spec::list_files::Entry>) -> CapResult<()> {
    use spec::list_files::{Entry, EntryKind, Kind};
    let read = std::fs::read_dir(dir).map_err(|e| CapError::new(format!("cannot list `{}`: {e}", ws.relative(dir))))?;
    for entry in read {
        let entry = entry?;
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == ".agent") {
            continue; // the host's own state
        }
        let meta = std::fs::symlink_metadata(&path)?;
        let is_dir = meta.is_dir();
        let wanted = match kind {
            Kind::Any => true,
            Kind::File => !is_dir,
            Kind::Directory => is_dir,
        };
        if wanted {
            out.push(Entry {
                path: ws.relative(&path),
                kind: if is_dir { EntryKind::Directory } else { EntryKind::File },
                size: (!is_dir).then_some(meta.len() as i64),
            });
        }
        if recursive && is_dir {
            collect(ws, &path, true, kind, out)?;
        }
    }
    Ok(())
}

#[capability(spec::search_files)]
async fn search_files(run: &Run, args: spec::search_files::Args) -> CapResult<spec::search_files::Output> {
    use spec::list_files::Kind;
    let ws = Workspace::of(run)?;
    let dir = ws.resolve(&args.path)?;
    let mut files = Vec::new();
    collect(ws, &dir, true, Kind::File, &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let case_sensitive = args.case_sensitive;
    let needle = if case_sensitive { args.query.clone() } else { args.query.to_lowercase() };
    let max = args.max_results.max(1) as usize;
    let mut matches = Vec::new();
    'files: for file in files {
        let Ok(text) = std::fs::read_to_string(ws.resolve(&file.path)?) else { continue };
        for (i, line) in text.lines().enumerate() {
            let hay = if case_sensitive { line.to_string() } else { line.to_lowercase() };
            if hay.contains(&needle) {
                matches.push(spec::search_files::MatchesItem { path: file.path.clone(), line: i as i64 + 1, text: line.to_string() });
                if matches.len() >= max {
                    break 'files;
                }
            }
        }
    }
    Ok(spec::search_files::Output { matches })
}

#[capability(spec::write_file)]
async fn write_file(run: &Run, args: spec::write_file::Args) -> CapResult<spec::write_file::Output> {
    use spec::write_file::Mode;
    let ws = Workspace::of(run)?;
    let path = ws.resolve(&args.path)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut options = std::fs::OpenOptions::new();
    match args.mode {
        Mode::Overwrite => options.write(true).create(true).truncate(true),
        Mode::Append => options.append(true).create(true),
        Mode::CreateNew => options.write(true).create_new(true),
    };
    let mut file = options.open(&path).map_err(|e| CapError::new(format!("cannot write `{}`: {e}", args.path)))?;
    file.write_all(args.content.as_bytes())?;
    Ok(spec::write_file::Output { bytes_written: args.content.len() as i64 })
}

#[capability(spec::move_file)]
async fn move_file(run: &Run, args: spec::move_file::Args) -> CapResult<()> {
    let ws = Workspace::of(run)?;
    let (from, to) = (ws.resolve(&args.from)?, ws.resolve(&args.to)?);
    if !from.exists() {
        return Err(CapError::new(format!("`{}` does not exist", args.from)));
    }
    if to.exists() && !args.overwrite {
        return Err(CapError::new(format!("`{}` exists; pass overwrite: true to replace it", args.to)));
    }
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::rename(from, to)?;
    Ok(())
}

#[capability(spec::delete_file)]
async fn delete_file(run: &Run, args: spec::delete_file::Args) -> CapResult<()> {
    let ws = Workspace::of(run)?;
    let path = ws.resolve(&args.path)?;
    if path == ws.root() {
        return Err(CapError::new("refusing to delete the workspace root"));
    }
    let meta = std::fs::symlink_metadata(&path).map_err(|e| CapError::new(format!("cannot delete `{}`: {e}", args.path)))?;
    if meta.is_dir() {
        // One empty directory, never a tree.
        std::fs::remove_dir(&path).map_err(|e| CapError::new(format!("cannot delete directory `{}` (only empty ones): {e}", args.path)))?;
    } else {
        std::fs::remove_file(&path)?;
    }
    Ok(())
}
