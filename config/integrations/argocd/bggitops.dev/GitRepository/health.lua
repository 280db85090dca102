-- Argo CD health of a bggitops.dev GitRepository.
--
-- It reads what the bg-gitops controller writes: status.observedGeneration,
-- status.suspended and the kstatus conditions Ready, Reconciling and
-- Stalled (Ready says why it is False: FetchFailed, BuildFailed,
-- ApplyFailed). Argo CD runs a health check from argocd-cm without Lua's
-- string library, so only the base and table libraries are used.
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

local generation = obj.metadata.generation
if generation ~= nil and (st.observedGeneration == nil or st.observedGeneration < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to act on generation " .. generation
  return hs
end

local ready = condition(st.conditions, "Ready")

-- spec.suspend or the suspend annotation: nothing is fetched or applied.
if st.suspended == true then
  hs.status = "Suspended"
  hs.message = say(ready, "suspended")
  return hs
end

local stalled = condition(st.conditions, "Stalled")
if isTrue(stalled) then
  hs.status = "Degraded"
  hs.message = say(stalled, "Stalled: " .. (stalled.reason or ""))
  return hs
end

local reconciling = condition(st.conditions, "Reconciling")
if isTrue(reconciling) then
  hs.status = "Progressing"
  hs.message = say(reconciling, reconciling.reason)
  return hs
end

if isTrue(ready) then
  hs.status = "Healthy"
  hs.message = say(ready, "Ready")
  return hs
end
if ready ~= nil and ready.status == "False" then
  hs.status = "Degraded"
  hs.message = (ready.reason or "NotReady") .. ": " .. say(ready, "")
  return hs
end

hs.status = "Progressing"
hs.message = say(ready, "Waiting for the first revision to be applied")
return hs
