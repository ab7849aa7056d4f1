// The demo page: translate with the chosen model (TF Serving's :predict, row format; a
// multilingual model's rows name their target language), each translation with its confidence
// and, on request, its alternatives (the n-best list) with their scores, or continuing a typed
// start of the translation; then show the cross-attention signature's heat maps (one per head)
// and the translation's word alignment for a chosen sentence; or translate the text box as a
// document (running text, sentences found by the server, the layout kept). A classifier (a model
// with the text_attention signature) labels each line instead, with its score, and shows what each
// head of its last layer attended to in a chosen text. Every signature, input, output and option
// name comes from the server, none is written here.
"use strict";

const form = document.getElementById("translate-form");
const modelSelect = document.getElementById("model");
const languageSelect = document.getElementById("target-lang");
const languageLabel = document.querySelector('label[for="target-lang"]');
const alternativesSelect = document.getElementById("alternatives");
const alternativesLabel = document.querySelector('label[for="alternatives"]');
const source = document.getElementById("source");
const prefixInput = document.getElementById("prefix");
const termsInput = document.getElementById("terms");
const termsLabel = document.querySelector('label[for="terms"]');
const documentBox = document.getElementById("document");
const sourceLanguage = document.getElementById("source-lang");
const htmlBox = document.getElementById("html");
const alignmentMap = document.getElementById("alignment-map");
const alignmentTitle = document.getElementById("alignment-title");
const alignmentCaption = document.getElementById("alignment-caption");
const statusLine = document.getElementById("status");
const list = document.getElementById("translations");
const attention = document.getElementById("attention");
const caption = document.getElementById("attention-caption");
const heatmaps = document.getElementById("heatmaps");
const attentionTitle = document.getElementById("attention-title");
const submitButton = form.querySelector("button[type=submit]");
const translationOptions = document.querySelectorAll(".translation-option");
let signaturesByModel = {};
let runtimeByModel = {};
let languagesByModel = {};
let beamSizeByModel = {};
// The export contract's signature, input and output names (from /demo/models).
let names = {};
// Only the latest request of each kind may draw its answer (an older one may arrive later).
let latestTranslation = 0;
let latestAttention = 0;

function showStatus(text, isError = false) {
  statusLine.textContent = text;
  statusLine.classList.toggle("error", isError);
}

// POSTs a :predict request; resolves to the response JSON, rejects with the API's error text.
async function predict(model, body) {
  const response = await fetch(`/v1/models/${encodeURIComponent(model)}:predict`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(json.error || `HTTP ${response.status}`);
  return json;
}

async function loadModels() {
  const response = await fetch("/demo/models");
  const listing = await response.json();
  names = listing.names;
  const { models } = listing;
  for (const model of models) {
    signaturesByModel[model.name] = model.signatures;
    runtimeByModel[model.name] = model.runtime;
    languagesByModel[model.name] = model.languages || [];
    beamSizeByModel[model.name] = model.beam_size;
    const label = `${model.name} (version ${model.version}, ${model.runtime})`;
    modelSelect.add(new Option(label, model.name));
  }
  showOptions();
}

// Whether a model is a classifier (a label and a score a text, not a translation).
function isClassifier(model) {
  return Boolean(signaturesByModel[model]?.includes(names.textAttention));
}

// The selectors a model offers: its target languages, its number of alternatives, its terms;
// none of them for a classifier.
function showOptions() {
  const classifier = isClassifier(modelSelect.value);
  for (const option of translationOptions) option.hidden = classifier;
  submitButton.textContent = classifier ? "Classify" : "Translate";
  attention.hidden = true;
  list.replaceChildren();
  if (classifier) {
    languageSelect.hidden = languageLabel.hidden = true;
    alternativesSelect.hidden = alternativesLabel.hidden = true;
    termsInput.hidden = termsLabel.hidden = true;
    return;
  }
  showLanguages();
  showAlternatives();
  // CTranslate2 has the signature for avoided phrases only: no box for terms.
  const model = modelSelect.value;
  const constrained = signaturesByModel[model]?.includes(names.constrainedSignature);
  termsInput.hidden = termsLabel.hidden = !constrained || runtimeByModel[model] === "CTranslate2";
}

// The target-language selector: shown for a multilingual model, with its languages.
function showLanguages() {
  const languages = languagesByModel[modelSelect.value] || [];
  const chosen = languageSelect.value;
  languageSelect.replaceChildren(...languages.map((code) => new Option(code, code)));
  if (languages.includes(chosen)) languageSelect.value = chosen;
  languageSelect.hidden = languageLabel.hidden = !languages.length;
}

// The alternatives selector: 1 to the beam size, for a model with the n_best signature.
function showAlternatives() {
  const model = modelSelect.value;
  const count = signaturesByModel[model]?.includes(names.nBestSignature) ? beamSizeByModel[model] : 1;
  const chosen = alternativesSelect.value;
  const counts = Array.from({ length: count }, (_, index) => String(index + 1));
  alternativesSelect.replaceChildren(...counts.map((n) => new Option(n, n)));
  if (counts.includes(chosen)) alternativesSelect.value = chosen;
  alternativesSelect.hidden = alternativesLabel.hidden = count < 2;
}

// The options of each row: the terms typed, where the model has the constrained signature
// (one translation, scored, from the typed start); else the typed start of the translation,
// where it has the prefixed signature (continued without scores); else the translation's
// scores, where it has the scored signature, and the chosen number of alternatives; and the
// soft word alignment, where it has the alignment signature.
function rowOptions(model) {
  const options = {};
  const signatures = signaturesByModel[model];
  const prefix = prefixInput.value.trim();
  const terms = termsInput.value.split(",").map((term) => term.trim()).filter(Boolean);
  if (terms.length && signatures.includes(names.constrainedSignature)) {
    options[names.terms] = terms;
    options[names.withScores] = true;
    if (prefix) options[names.targetPrefix] = prefix;
  } else if (prefix && signatures.includes(names.prefixedSignature)) {
    options[names.targetPrefix] = prefix;
  } else {
    if (signatures.includes(names.scoredSignature)) options[names.withScores] = true;
    const alternatives = Number(alternativesSelect.value);
    if (alternatives > 1) options[names.nBest] = alternatives;
  }
  if (signatures.includes(names.alignmentSignature)) options[names.alignments] = "soft";
  return options;
}

// The :predict rows of some sentences: plain text, or objects with the text, a multilingual
// model's target language and the row's options.
function instances(model, sentences, options = {}) {
  const language = languagesByModel[model].length ? { [names.targetLang]: languageSelect.value } : {};
  if (!Object.keys(language).length && !Object.keys(options).length) return sentences;
  return sentences.map((text) => ({ [names.text]: text, ...language, ...options }));
}

// "score -0.63 · confidence 0.81" of a hypothesis (no score: a search that never finished).
function scores(hypothesis, withScore = true) {
  const confidence = hypothesis[names.confidence];
  if (confidence === null || confidence === undefined) return "";
  const parts = [`confidence ${confidence.toFixed(2)}`];
  if (withScore) parts.unshift(`score ${hypothesis[names.score].toFixed(2)}`);
  return parts.join(" · ");
}

// One translated sentence: the translation, its confidence, the source and its alternatives.
function translationItem(prediction, sentence) {
  const answer = typeof prediction === "string" ? { [names.translation]: prediction } : prediction;
  const item = document.createElement("li");
  item.alignment = answer[names.alignment];
  const text = document.createElement("div");
  text.className = "translation";
  text.textContent = answer[names.translation];
  item.append(text);
  const confidence = scores(answer, false);
  if (confidence) {
    const badge = document.createElement("div");
    badge.className = "confidence";
    badge.textContent = confidence;
    item.append(badge);
  }
  const original = document.createElement("div");
  original.className = "source";
  original.textContent = sentence;
  item.append(original);
  if (answer[names.hypotheses]) {
    const alternatives = document.createElement("ol");
    alternatives.className = "alternatives";
    for (const hypothesis of answer[names.hypotheses]) {
      const alternative = document.createElement("li");
      const hypothesisText = document.createElement("span");
      hypothesisText.className = "alternative";
      hypothesisText.textContent = hypothesis[names.translation];
      const hypothesisScores = document.createElement("span");
      hypothesisScores.className = "scores";
      hypothesisScores.textContent = scores(hypothesis);
      alternative.append(hypothesisText, hypothesisScores);
      alternatives.append(alternative);
    }
    item.append(alternatives);
  }
  return item;
}

// The text box as one document row (its tags kept when it is HTML); its translation shown as
// one text, laid out as typed (HTML shown as its source).
async function translateDocument() {
  const text = source.value;
  if (!text.trim()) return;
  const model = modelSelect.value;
  showStatus("Translating…");
  const request = ++latestTranslation;
  const options = { [names.document]: true, [names.sourceLang]: sourceLanguage.value.trim() || "en" };
  if (htmlBox.checked) options[names.html] = true;
  try {
    const { predictions } = await predict(model, {
      signature_name: names.translate,
      instances: instances(model, [text], options),
    });
    if (request !== latestTranslation) return;
    const item = document.createElement("li");
    const translation = document.createElement("div");
    translation.className = "translation document";
    translation.textContent = predictions[0];
    item.append(translation);
    list.replaceChildren(item);
    attention.hidden = true;
    showStatus(`A document translated by ${model}.`);
  } catch (error) {
    if (request === latestTranslation) showStatus(error.message, true);
  }
}

// A classifier's answer for each line: its label and score; the first text's heat map.
async function classify() {
  const texts = source.value.split("\n").map((s) => s.trim()).filter((s) => s);
  if (!texts.length) return;
  const model = modelSelect.value;
  showStatus("Classifying…");
  const request = ++latestTranslation;
  try {
    const { predictions } = await predict(model, { signature_name: names.translate, instances: texts });
    if (request !== latestTranslation) return;
    list.replaceChildren();
    predictions.forEach((prediction, index) => {
      const item = document.createElement("li");
      const label = document.createElement("div");
      label.className = "label";
      label.textContent = prediction[names.label];
      const score = document.createElement("div");
      score.className = "confidence";
      score.textContent = `probability ${prediction[names.score].toFixed(4)}`;
      const text = document.createElement("div");
      text.className = "source";
      text.textContent = texts[index];
      item.append(label, score, text);
      item.addEventListener("click", () => showTextAttention(model, texts[index], item));
      list.append(item);
    });
    showStatus(`${texts.length} text(s) classified by ${model}.`);
    await showTextAttention(model, texts[0], list.firstElementChild);
  } catch (error) {
    if (request === latestTranslation) showStatus(error.message, true);
  }
}

// One panel of a classified text: its pieces, each on its weight's colour (relative to the
// panel's largest), the weight on hover.
function textHeatmap(name, weights, pieces) {
  const figure = document.createElement("figure");
  figure.className = "text-heatmap";
  const title = document.createElement("figcaption");
  const largest = Math.max(...weights) || 1;
  title.textContent = `${name} (yellow: ${largest.toFixed(3)})`;
  const text = document.createElement("p");
  pieces.forEach((piece, index) => {
    const span = document.createElement("span");
    const relative = weights[index] / largest;
    span.textContent = piece.replaceAll("\u2581", " ");
    span.style.background = colour(relative);
    span.style.color = relative > 0.6 ? "black" : "white";
    span.title = `${piece}: ${weights[index].toFixed(4)}`;
    text.append(span);
  });
  figure.append(title, text);
  return figure;
}

// What each head of the classifier's last layer attended to in a text, and their mean.
async function showTextAttention(model, text, item) {
  for (const other of list.children) other.classList.toggle("selected", other === item);
  const request = ++latestAttention;
  try {
    const { predictions } = await predict(model, {
      signature_name: names.textAttention,
      instances: [text],
    });
    if (request !== latestAttention) return;
    const prediction = predictions[0];
    const pieces = prediction[names.pieces].filter((piece) => piece);
    const heads = prediction[names.attention].map((head) => head.slice(0, pieces.length));
    const mean = pieces.map((_, index) => heads.reduce((sum, head) => sum + head[index], 0) / heads.length);
    attentionTitle.textContent = "What the classifier's last layer attended to";
    caption.textContent = `“${text}”: ${prediction[names.label]} (${prediction[names.score].toFixed(4)}); the pieces it read.`;
    heatmaps.replaceChildren(
      ...heads.map((head, index) => textHeatmap(`head ${index + 1}`, head, pieces)),
      textHeatmap("mean of the heads", mean, pieces),
    );
    showAlignment(null);
    attention.hidden = false;
  } catch (error) {
    if (request === latestAttention) showStatus(error.message, true);
  }
}

async function translate() {
  if (isClassifier(modelSelect.value)) return classify();
  if (documentBox.checked) return translateDocument();
  const sentences = source.value.split("\n").map((s) => s.trim()).filter((s) => s);
  if (!sentences.length) return;
  const model = modelSelect.value;
  showStatus("Translating…");
  const request = ++latestTranslation;
  try {
    const { predictions } = await predict(model, {
      signature_name: names.translate,
      instances: instances(model, sentences, rowOptions(model)),
    });
    if (request !== latestTranslation) return;
    list.replaceChildren();
    predictions.forEach((prediction, index) => {
      const item = translationItem(prediction, sentences[index]);
      item.addEventListener("click", () => showAttention(model, sentences[index], item));
      list.append(item);
    });
    showStatus(`${sentences.length} sentence(s) translated by ${model}.`);
    if (signaturesByModel[model].includes(names.crossAttention)) {
      await showAttention(model, sentences[0], list.firstElementChild);
    }
  } catch (error) {
    if (request === latestTranslation) showStatus(error.message, true);
  }
}

// Viridis, by linear interpolation between five of its colours; value in [0, 1].
const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
function colour(value) {
  const position = Math.min(Math.max(value, 0), 1) * (VIRIDIS.length - 1);
  const low = Math.floor(position);
  const high = Math.min(low + 1, VIRIDIS.length - 1);
  const mix = (i) => Math.round(VIRIDIS[low][i] + (VIRIDIS[high][i] - VIRIDIS[low][i]) * (position - low));
  return `rgb(${mix(0)}, ${mix(1)}, ${mix(2)})`;
}

// A heat map of attention weights (rows: output pieces, columns: source pieces); with
// markMost, each row's largest weight is outlined.
function heatmap(name, weights, sourcePieces, targetPieces, markMost = false) {
  const figure = document.createElement("figure");
  figure.className = "heatmap";
  const title = document.createElement("figcaption");
  title.textContent = name;
  const table = document.createElement("table");
  table.className = "heatmap";
  const headerRow = table.createTHead().insertRow();
  headerRow.append(document.createElement("th"));
  for (const piece of sourcePieces) {
    const cell = document.createElement("th");
    cell.textContent = piece;
    headerRow.append(cell);
  }
  const body = table.createTBody();
  targetPieces.forEach((piece, row) => {
    const tableRow = body.insertRow();
    const label = document.createElement("th");
    label.textContent = piece;
    tableRow.append(label);
    const most = weights[row].indexOf(Math.max(...weights[row]));
    sourcePieces.forEach((sourcePiece, column) => {
      const cell = tableRow.insertCell();
      const weight = weights[row][column];
      cell.style.background = colour(weight);
      cell.title = `${piece} → ${sourcePiece}: ${weight.toFixed(3)}`;
      if (markMost && column === most) cell.classList.add("aligned");
    });
  });
  figure.append(title, table);
  return figure;
}

async function showAttention(model, sentence, item) {
  if (!signaturesByModel[model].includes(names.crossAttention)) return;
  for (const other of list.children) other.classList.toggle("selected", other === item);
  const request = ++latestAttention;
  try {
    const { predictions } = await predict(model, {
      signature_name: names.crossAttention,
      instances: instances(model, [sentence]),
    });
    if (request !== latestAttention) return;
    const prediction = predictions[0];
    const weights = prediction[names.attention];
    // Padding pieces are empty strings: keep the real ones.
    const sourcePieces = prediction[names.sourcePieces].filter((piece) => piece);
    const targetPieces = prediction[names.targetPieces].filter((piece) => piece);
    attentionTitle.textContent = "Cross-attention of the last decoder layer";
    caption.textContent = `“${sentence}”: rows are the output pieces, columns the source pieces.`;
    if (languagesByModel[model].length) {
      caption.textContent += ` The source begins with the tag of the target language (<2${languageSelect.value}>).`;
    }
    if (runtimeByModel[model] === "CTranslate2") {
      caption.textContent +=
        " CTranslate2 returns one map: its alignment heads', the word alignment's.";
    }
    heatmaps.replaceChildren(
      ...weights.map((head, index) => heatmap(`head ${index + 1}`, head, sourcePieces, targetPieces)),
    );
    showAlignment(item.alignment);
    attention.hidden = false;
  } catch (error) {
    if (request === latestAttention) showStatus(error.message, true);
  }
}

// The soft word alignment a translation came with (none: the model has no alignment signature).
function showAlignment(alignment) {
  alignmentTitle.hidden = alignmentCaption.hidden = !alignment;
  if (!alignment) {
    alignmentMap.replaceChildren();
    return;
  }
  alignmentMap.replaceChildren(
    heatmap(
      "alignment",
      alignment[names.attention],
      alignment[names.sourcePieces],
      alignment[names.targetPieces],
      true,
    ),
  );
}

source.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    translate();
  }
});
modelSelect.addEventListener("change", showOptions);
for (const select of [languageSelect, alternativesSelect]) {
  select.addEventListener("change", () => {
    if (source.value.trim()) translate();
  });
}
form.addEventListener("submit", (event) => {
  event.preventDefault();
  translate();
});
loadModels().catch((error) => showStatus(`Could not list the models: ${error.message}`, true));
