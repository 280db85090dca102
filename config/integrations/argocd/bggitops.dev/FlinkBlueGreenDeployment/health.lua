-- Argo CD health of a bggitops.dev FlinkBlueGreenDeployment.
--
-- It reads what the bg-gitops controller writes: status.observedGeneration,
-- the kstatus conditions Ready, Reconciling and Stalled, and
-- status.blueGreenState, status.jobStatus.state and status.activeJobState.
-- Argo CD runs a health check from argocd-cm without Lua's string library,
-- so only the base and table libraries are used.
local hs = {}

local function condition(conds, typ)
  if conds == nil then
    return nil
  end
  for _, c in ipairs(conds) do
    if c.type == typ then
      return c
    end
  end
  return nil
end

local function isTrue(c)
  return c ~= nil and c.status == "True"
end

local function say(c, fallback)
  if c ~= nil and c.message ~= nil and c.message ~= "" then
    return c.message
  end
  return fallback
end

local st = obj.status
if st == nil or st.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the bg-gitops controller"
  return hs
end

-- A spec the controller has not acted on yet: whatever the conditions say
-- is about the previous one.
local generation = obj.metadata.generation
if generation ~= nil and (st.observedGeneration == nil or st.observedGeneration < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to act on generation " .. generation
  return hs
end

-- Stalled: a rollout failed (the previous colour still runs) or the spec
-- cannot work; it stays until the next change or a retry.
local stalled = condition(st.conditions, "Stalled")
if isTrue(stalled) then
  hs.status = "Degraded"
  hs.message = say(stalled, "Stalled: " .. (stalled.reason or ""))
  return hs
end

-- Reconciling: a savepoint, a transition, a deletion in progress, or a
-- cut-over that waits for something outside the controller: a manual
-- promotion (bg-gitops promote) or a rollout window.
local reconciling = condition(st.conditions, "Reconciling")
if isTrue(reconciling) then
  if reconciling.reason == "WaitingForPromotion" or reconciling.reason == "WaitingForRolloutWindow" then
    hs.status = "Suspended"
  else
    hs.status = "Progressing"
  end
  hs.message = say(reconciling, reconciling.reason)
  return hs
end

local state = st.blueGreenState
if state == "SAVEPOINTING_BLUE" or state == "SAVEPOINTING_GREEN" or
   state == "TRANSITIONING_TO_BLUE" or state == "TRANSITIONING_TO_GREEN" then
  hs.status = "Progressing"
  hs.message = state
  return hs
end

local job = nil
if st.jobStatus ~= nil then
  job = st.jobStatus.state
end
if job == "FAILING" then
  hs.status = "Degraded"
  hs.message = st.error or "the last rollout failed"
  return hs
end
if st.activeJobState == "FAILED" then
  hs.status = "Degraded"
  hs.message = "the job of " .. (st.activeDeployment or "the active FlinkDeployment") .. " has FAILED"
  return hs
end

local ready = condition(st.conditions, "Ready")
if isTrue(ready) then
  hs.status = "Healthy"
  hs.message = say(ready, "Ready")
  return hs
end
if job == "SUSPENDED" then
  hs.status = "Suspended"
  hs.message = say(ready, "the job is suspended")
  return hs
end

hs.status = "Progressing"
hs.message = say(ready, "Waiting for the job to run")
return hs
