// The page at `/`: lists the voices, speaks through POST /v1/audio/speech,
// plays and offers the result for download. No libraries, nothing fetched from elsewhere.
// URLs are relative: the page also lives under Home Assistant's ingress prefix.
"use strict";

const $ = (id) => document.getElementById(id);
let audioUrl = null;

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("key").value.trim();
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

function blended() {
  const other = $("blend").value;
  return Boolean(other) && other !== $("voice").value;
}

// A blend as the server writes it (its log, X-Kokoro-Voice): weights adding up to 1.
function voiceSpec() {
  const main = $("voice").value;
  if (!blended()) return main;
  const share = Number($("share").value);
  return `${main}(${(100 - share) / 100})+${$("blend").value}(${share / 100})`;
}

function status(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

async function errorText(response) {
  try {
    const body = await response.json();
    return body.error.message;
  } catch (e) {
    return response.statusText;
  }
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
  $("voice").replaceChildren();
  $("blend").replaceChildren($("blend").options[0]);  // keeps "(none)"
  for (const select of [$("voice"), $("blend")]) {
    for (const voice of body.voices) {
      const option = document.createElement("option");
      option.value = voice.id;
      option.textContent = `${voice.id} — ${voice.name}`;
      select.append(option);
    }
  }
  $("voice").value = body.default;
  update();
}

function update() {
  $("share").disabled = !blended();  // a share of nothing means nothing
  $("speed-out").textContent = Number($("speed").value).toFixed(2) + "×";
  $("share-out").textContent = $("share").value + " %";
  $("voice-spec").textContent = voiceSpec();
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

async function speak(event) {
  event.preventDefault();
  if (!$("voice").options.length) await loadVoices();
  const format = $("format").value;
  $("speak").disabled = true;
  clearAudio();
  status("Speaking…");
  const started = performance.now();
  try {
    const response = await fetch("v1/audio/speech", {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({
        model: "kokoro",
        input: $("text").value,
        voice: voiceSpec(),
        speed: Number($("speed").value),
        response_format: format,
      }),
    });
    if (!response.ok) {
      if (response.status === 401) $("key-label").hidden = false;
      status(await errorText(response), true);
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
    status(`Done in ${seconds} s (${Math.round(blob.size / 1024)} kB).`);
    $("player").play().catch(() => {});  // autoplay may be refused: the controls remain
  } catch (e) {
    clearAudio();
    status("The server cannot be reached: " + e.message, true);
  } finally {
    $("speak").disabled = false;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  for (const id of ["voice", "blend", "share", "speed"]) $(id).addEventListener("input", update);
  $("key").addEventListener("change", () =>
    loadVoices().catch((e) => status("The server cannot be reached: " + e.message, true)));
  $("form").addEventListener("submit", speak);
  loadVoices().catch((e) => status("The server cannot be reached: " + e.message, true));
});
