//! `plan`: plans stored as JSON in `<workspace>/.agent/plans/`. `run_plan`
//! calls each step's capability through the session's [`Mounted`], so every
//! step meets the gate like any other call.

use capspec::{CapError, CapResult, Mounted, Run, capability};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::generated::plan as spec;
use crate::workspace::Workspace;

#[derive(Serialize, Deserialize)]
struct StoredPlan {
    goal: String,
    steps: Vec<StoredStep>,
}

#[derive(Serialize, Deserialize)]
struct StoredStep {
    title: String,
    depends_on: Vec<i64>,
    /// `{"capability": …, "args": …}` or a free-text instruction.
    action: Option<Value>,
    status: String,
    note: Option<String>,
}

fn path_of(run: &Run, id: &str) -> CapResult<std::path::PathBuf> {
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        return Err(CapError::new(format!("no plan `{id}`")));
    }
    Ok(Workspace::of(run)?.state_dir("plans")?.join(format!("{id}.json")))
}

fn load(run: &Run, id: &str) -> CapResult<StoredPlan> {
    let text = std::fs::read_to_string(path_of(run, id)?).map_err(|_| CapError::new(format!("no plan `{id}`")))?;
    Ok(serde_json::from_str(&text)?)
}

fn save(run: &Run, id: &str, plan: &StoredPlan) -> CapResult<()> {
    std::fs::write(path_of(run, id)?, serde_json::to_string_pretty(plan)?)?;
    Ok(())
}

#[capability(spec::create_plan)]
async fn create_plan(run: &Run, args: spec::create_plan::Args) -> CapResult<spec::create_plan::Output> {
    let dir = Workspace::of(run)?.state_dir("plans")?;
    let next = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("plan-")?.strip_suffix(".json")?.parse::<u64>().ok())
        .max()
        .unwrap_or(0)
        + 1;
    let count = args.steps.len() as i64;
    let mut steps = Vec::new();
    for (i, step) in args.steps.into_iter().enumerate() {
        let depends_on = step.depends_on.unwrap_or_default();
        if let Some(bad) = depends_on.iter().find(|d| **d >= i as i64 || **d >= count) {
            return Err(CapError::new(format!("step {i} depends on step {bad}, which is not an earlier step")));
        }
        steps.push(StoredStep {
            title: step.title,
            depends_on,
            action: step.action.map(serde_json::to_value).transpose()?,
            status: "pending".into(),
            note: None,
        });
    }
    let id = format!("plan-{next}");
    save(run, &id, &StoredPlan { goal: args.goal, steps })?;
    Ok(spec::create_plan::Output { plan_id: id })
}

fn status_of(text: &str) -> spec::get_plan::Status {
    use spec::get_plan::Status::*;
    match text {
        "running" => Running,
        "done" => Done,
        "failed" => Failed,
        "skipped" => Skipped,
        _ => Pending,
    }
}

#[capability(spec::get_plan)]
async fn get_plan(run: &Run, args: spec::get_plan::Args) -> CapResult<spec::get_plan::Output> {
    let plan = load(run, &args.plan_id)?;
    let steps = plan.steps.into_iter().map(|s| spec::get_plan::StepsItem { title: s.title, status: Box::new(status_of(&s.status)) }).collect();
    Ok(spec::get_plan::Output { goal: plan.goal, steps })
}

#[capability(spec::update_step)]
async fn update_step(run: &Run, args: spec::update_step::Args) -> CapResult<()> {
    let mut plan = load(run, &args.plan_id)?;
    let count = plan.steps.len();
    let step = plan
        .steps
        .get_mut(args.step as usize)
        .ok_or_else(|| CapError::new(format!("plan `{}` has {count} steps; there is no step {}", args.plan_id, args.step)))?;
    step.status = serde_json::to_value(args.status)?.as_str().unwrap_or("pending").to_string();
    step.note = args.note;
    save(run, &args.plan_id, &plan)
}

#[capability(spec::run_plan)]
async fn run_plan(run: &Run, args: spec::run_plan::Args) -> CapResult<spec::run_plan::Output> {
    let mounted = run.get::<Mounted>().ok_or_else(|| CapError::new("this run has no mounted session to run plan steps with"))?.clone();
    let mut plan = load(run, &args.plan_id)?;
    let stop_on_failure = args.stop_on_failure;
    let (mut completed, mut failed) = (0, 0);
    loop {
        let ready = plan.steps.iter().position(|s| {
            s.status == "pending"
                && s.action.as_ref().is_some_and(|a| a.get("capability").is_some())
                && s.depends_on.iter().all(|d| plan.steps.get(*d as usize).is_some_and(|p| p.status == "done"))
        });
        let Some(i) = ready else { break };
        let action = plan.steps[i].action.clone().unwrap_or_default();
        let name = action["capability"].as_str().unwrap_or_default().to_string();
        let step_args = action.get("args").cloned().unwrap_or(Value::Null);
        match mounted.invoke(run, &name, step_args).await {
            Ok(_) => {
                plan.steps[i].status = "done".into();
                completed += 1;
            }
            Err(e) => {
                plan.steps[i].status = "failed".into();
                plan.steps[i].note = Some(format!("{}: {}", e.code, e.message));
                failed += 1;
            }
        }
        save(run, &args.plan_id, &plan)?;
        if failed > 0 && stop_on_failure {
            break;
        }
    }
    Ok(spec::run_plan::Output { completed, failed })
}

#[capability(spec::delegate_task)]
async fn delegate_task(run: &Run, args: spec::delegate_task::Args) -> CapResult<spec::delegate_task::Output> {
    let router = run.router().ok_or_else(|| CapError::new("no other agent is connected to this host; nothing to delegate to"))?;
    let answer = router.route("plan.delegate_task", serde_json::to_value(&args)?).await.map_err(CapError::new)?;
    let answer = answer.as_str().map(String::from).unwrap_or_else(|| answer.to_string());
    Ok(spec::delegate_task::Output { answer })
}
