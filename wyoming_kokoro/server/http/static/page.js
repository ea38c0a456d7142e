// The page at `/`: lists the voices, speaks through POST /v1/audio/speech, plays and
// offers the result for download; saves presets and pronunciations (PUT/DELETE
// v1/presets/NAME and v1/lexicon). No libraries, nothing fetched from elsewhere.
// URLs are relative: the page also lives under Home Assistant's ingress prefix.
"use strict";

const $ = (id) => document.getElementById(id);
let audioUrl = null;
let presets = {};  // name → {voice, speed, volume, language}, from the voice list

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("key").value.trim();
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

function blendRows() {
  return Array.from(document.querySelectorAll("#blends .blend"));
}

// The voices blended with the main one, with their shares in percent.
function blendParts() {
  const main = $("voice").value;
  if (presets[main]) return [];  // a preset is a voice of its own: it cannot be blended
  return blendRows()
    .map((row) => ({ voice: row.querySelector(".blend-voice").value,
                     share: Number(row.querySelector(".blend-share").value) }))
    .filter((part) => part.voice && part.voice !== main);
}

// A blend as the server writes it (its log, X-Kokoro-Voice): weights adding up to 1.
function voiceSpec() {
  const main = $("voice").value;
  const parts = blendParts();
  if (!parts.length) return main;
  const rest = 100 - parts.reduce((sum, part) => sum + part.share, 0);
  return [`${main}(${rest / 100})`, ...parts.map((p) => `${p.voice}(${p.share / 100})`)].join("+");
}

function status(text, isError, id = "status") {
  $(id).textContent = text;
  $(id).className = isError ? "error" : "";
}

async function errorText(response) {
  try {
    const body = await response.json();
    return body.error.message;
  } catch (e) {
    return response.statusText;
  }
}

function option(value, text) {
  const element = document.createElement("option");
  element.value = value;
  element.textContent = text;
  return element;
}

// The list needs the key, as every /v1 path does: asked again once one is entered.
async function loadVoices() {
  const response = await fetch("v1/audio/voices", { headers: headers() });
  if (response.status === 401) {
    $("key-label").hidden = false;
    status($("key").value.trim()
      ? "The server refused this API key: it is wrong."
      : "This server needs an API key: enter it to list the voices and speak.", true);
    return;
  }
  if (!response.ok) { status(await errorText(response), true); return; }
  const body = await response.json();
  if ($("status").className === "error") status("");
  const chosen = $("voice").value || body.default;
  presets = {};
  for (const voice of body.voices) if (voice.preset) presets[voice.id] = voice.preset;
  $("voice").replaceChildren(...body.voices.map((v) => option(v.id, `${v.id} — ${v.name}`)));
  for (const select of document.querySelectorAll(".blend-voice")) {
    const picked = select.value;
    select.replaceChildren(option("", "(none)"),
      ...body.voices.filter((v) => !v.preset).map((v) => option(v.id, `${v.id} — ${v.name}`)));
    select.value = picked;
  }
  $("voice").value = body.voices.some((v) => v.id === chosen) ? chosen : body.default;
  listPresets();
  update();
}

// The shares of the blended voices leave the main voice at least 5 %.
function keepRoom(moved) {
  const others = blendRows()
    .map((row) => row.querySelector(".blend-share"))
    .filter((share) => share !== moved && !share.disabled)
    .reduce((sum, share) => sum + Number(share.value), 0);
  if (Number(moved.value) + others > 95) moved.value = String(Math.max(5, 95 - others));
}

function update(event) {
  const main = $("voice").value;
  for (const row of blendRows()) {
    const other = row.querySelector(".blend-voice").value;
    // A share of nothing means nothing.
    row.querySelector(".blend-share").disabled = !other || other === main || Boolean(presets[main]);
  }
  if (event && event.target.classList.contains("blend-share")) keepRoom(event.target);
  const active = blendRows().map((row) => row.querySelector(".blend-share")).filter((s) => !s.disabled);
  let total = active.reduce((sum, share) => sum + Number(share.value), 0);
  for (let i = active.length - 1; total > 95 && i >= 0; i--) {  // a voice picked: room again
    const cut = Math.min(total - 95, Number(active[i].value) - 5);
    active[i].value = String(Number(active[i].value) - cut);
    total -= cut;
  }
  for (const row of blendRows()) {
    row.querySelector(".blend-out").textContent = row.querySelector(".blend-share").value + " %";
  }
  $("speed-out").textContent = Number($("speed").value).toFixed(2) + "×";
  $("volume-out").textContent = Number($("volume").value).toFixed(2) + "×";
  $("voice-spec").textContent = voiceSpec();
}

function addBlend() {
  const row = blendRows()[0].cloneNode(true);
  for (const element of row.querySelectorAll("[id]")) element.removeAttribute("id");
  row.querySelector(".blend-voice").value = "";
  row.querySelector(".blend-share").value = "20";
  $("blends").append(row);
  update();
}

let sourceUrl = null;

// The audio of an earlier text goes, with its link: after an error it would pass
// for the answer to the text now in the box.
function clearAudio() {
  const player = $("player");
  player.pause();
  player.removeAttribute("src");
  player.load();
  for (const url of [audioUrl, sourceUrl]) if (url) URL.revokeObjectURL(url);
  audioUrl = sourceUrl = null;
  $("download").hidden = true;
  $("download").removeAttribute("href");
}

// Appends each chunk of the body to a MediaSource the player reads: playback starts
// with the first chunk. Returns the whole file, for the download link.
async function playWhileStreaming(response) {
  const source = new MediaSource();
  if (sourceUrl) URL.revokeObjectURL(sourceUrl);
  sourceUrl = URL.createObjectURL(source);
  $("player").src = sourceUrl;
  await new Promise((resolve) => source.addEventListener("sourceopen", resolve, { once: true }));
  const buffer = source.addSourceBuffer("audio/mpeg");
  const appended = () => new Promise((resolve) => buffer.addEventListener("updateend", resolve, { once: true }));
  const reader = response.body.getReader();
  const chunks = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    buffer.appendBuffer(value);
    await appended();
    if (chunks.length === 1) {
      window.kokoroPlayedAt = performance.now();
      $("player").play().catch(() => {});
    }
  }
  if (source.readyState === "open") source.endOfStream();
  window.kokoroDoneAt = performance.now();
  return new Blob(chunks, { type: "audio/mpeg" });
}

async function speakText(text, statusId) {
  if (!$("voice").options.length) await loadVoices();
  const format = $("format").value;
  $("speak").disabled = true;
  clearAudio();
  status("Speaking…", false, statusId);
  const started = performance.now();
  try {
    const response = await fetch("v1/audio/speech", {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({
        model: "kokoro",
        input: text,
        voice: voiceSpec(),
        speed: Number($("speed").value),
        volume_multiplier: Number($("volume").value),
        response_format: format,
      }),
    });
    if (!response.ok) {
      if (response.status === 401) $("key-label").hidden = false;
      status(await errorText(response), true, statusId);
      return;
    }
    // mp3 plays while it streams (Media Source Extensions); other formats once complete.
    const streaming = format === "mp3" && window.MediaSource && MediaSource.isTypeSupported("audio/mpeg");
    const blob = streaming ? await playWhileStreaming(response) : await response.blob();
    $("voice-spec").textContent = response.headers.get("X-Kokoro-Voice") || voiceSpec();
    audioUrl = URL.createObjectURL(blob);
    if (!streaming) $("player").src = audioUrl;
    $("download").href = audioUrl;
    $("download").download = "speech." + format;
    $("download").hidden = false;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    status(`Done in ${seconds} s (${Math.round(blob.size / 1024)} kB).`, false, statusId);
    $("player").play().catch(() => {});  // autoplay may be refused: the controls remain
  } catch (e) {
    clearAudio();
    status("The server cannot be reached: " + e.message, true, statusId);
  } finally {
    $("speak").disabled = false;
  }
}

function speak(event) {
  event.preventDefault();
  return speakText($("text").value, "status");
}

// A change saved on the server; its refusal (in the reader's words) shown, else `done`.
async function save(method, url, body, statusId, done) {
  status("Saving…", false, statusId);
  try {
    const response = await fetch(url, {
      method, headers: headers(), body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) {
      if (response.status === 401) $("key-label").hidden = false;
      status(await errorText(response), true, statusId);
      return false;
    }
    status(done, false, statusId);
    return true;
  } catch (e) {
    status("The server cannot be reached: " + e.message, true, statusId);
    return false;
  }
}

async function savePreset(event) {
  event.preventDefault();
  const name = $("preset-name").value.trim();
  const main = $("voice").value;
  const fields = {
    voice: presets[main] ? presets[main].voice : voiceSpec(),
    speed: Number($("speed").value),
    volume: Number($("volume").value),
  };
  const description = $("preset-description").value.trim();
  if (description) fields.description = description;
  // Left empty: the server's pauses (a number the reader refuses is refused in its words).
  for (const [id, field] of [["preset-sentence-pause", "sentence_pause"],
    ["preset-paragraph-pause", "paragraph_pause"], ["preset-lead-silence", "lead_silence"],
    ["preset-tail-silence", "tail_silence"]]) {
    if ($(id).value.trim() !== "") fields[field] = Number($(id).value);
  }
  if (await save("PUT", "v1/presets/" + encodeURIComponent(name), fields, "preset-status",
    `Saved ${name}: Home Assistant lists it at its next look.`)) await loadVoices();
}

function listPresets() {
  const items = Object.entries(presets).map(([name, preset]) => {
    const item = document.createElement("li");
    const text = document.createElement("span");
    const speed = preset.speed === null ? "" : `, speed ${preset.speed}`;
    text.textContent = `${name}: ${preset.voice}${speed}, volume ${preset.volume}`;
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "small";
    remove.textContent = "Remove";
    remove.addEventListener("click", async () => {
      if (await save("DELETE", "v1/presets/" + encodeURIComponent(name), undefined,
        "preset-status", `Removed ${name}.`)) await loadVoices();
    });
    item.append(text, remove);
    return item;
  });
  $("preset-list").replaceChildren(...items);
}

async function loadLexicon() {
  const response = await fetch("v1/lexicon", { headers: headers() });
  if (!response.ok) return;  // the voice list says what is wrong (a key)
  const rows = (await response.json()).entries.map((entry) => {
    const row = document.createElement("tr");
    const word = document.createElement("td");
    word.textContent = entry.word;
    const said = document.createElement("td");
    said.textContent = entry.pronunciation;
    const actions = document.createElement("td");
    const sayIt = document.createElement("button");
    sayIt.type = "button";
    sayIt.className = "small say-it";
    sayIt.textContent = "Say it";
    sayIt.addEventListener("click", () => speakText(entry.word, "lexicon-status"));
    actions.append(sayIt);
    if (entry.editable) {
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "small";
      remove.textContent = "Remove";
      remove.addEventListener("click", async () => {
        if (await save("DELETE", "v1/lexicon", { word: entry.word }, "lexicon-status",
          `Removed ${entry.word}.`)) await loadLexicon();
      });
      actions.append(" ", remove);
    }
    row.append(word, said, actions);
    return row;
  });
  $("lexicon-table").tBodies[0].replaceChildren(...rows);
}

async function saveWord(event) {
  event.preventDefault();
  const word = $("lexicon-word").value.trim();
  const body = { word, pronunciation: $("lexicon-said").value };
  if (await save("PUT", "v1/lexicon", body, "lexicon-status",
    `Saved: the next answer says ${word} as written here.`)) {
    $("lexicon-word").value = $("lexicon-said").value = "";
    await loadLexicon();
  }
}

function loadAll() {
  const failed = (e) => status("The server cannot be reached: " + e.message, true);
  loadVoices().then(loadLexicon).catch(failed);
}

document.addEventListener("DOMContentLoaded", () => {
  $("form").addEventListener("input", update);
  $("form").addEventListener("change", update);
  $("add-blend").addEventListener("click", addBlend);
  $("key").addEventListener("change", loadAll);
  $("form").addEventListener("submit", speak);
  $("preset-form").addEventListener("submit", savePreset);
  $("lexicon-form").addEventListener("submit", saveWord);
  loadAll();
});
