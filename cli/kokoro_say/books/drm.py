"""Is an EPUB's text encrypted? META-INF/encryption.xml lists the encrypted files: fonts
obfuscated as the EPUB standard allows are fine, an encrypted content document is DRM,
which kokoro-say does not break (read anyway, its text would be noise)."""

from __future__ import annotations

import zipfile

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

from kokoro_say.book import BookError

_ENC = "{http://www.w3.org/2001/04/xmlenc#}"
# Font obfuscation (IDPF, and Adobe's older one) hides fonts, never text.
_FONT_ONLY = {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
# What is read aloud: an encrypted image or font alone leaves the text readable.
_DOCUMENTS = (".xhtml", ".html", ".htm", ".xml", ".opf", ".ncx")


def refuse_drm(archive: zipfile.ZipFile, name: str) -> None:
    """BookError if the book's content documents are encrypted."""
    try:
        data = archive.read("META-INF/encryption.xml")
    except KeyError:
        return
    try:
        root = ElementTree.fromstring(data)
    except (ElementTree.ParseError, DefusedXmlException):
        return  # unreadable: the documents themselves will tell
    for encrypted in root.iter(f"{_ENC}EncryptedData"):
        method = encrypted.find(f"{_ENC}EncryptionMethod")
        algorithm = method.get("Algorithm", "") if method is not None else ""
        reference = encrypted.find(f"{_ENC}CipherData/{_ENC}CipherReference")
        uri = reference.get("URI", "") if reference is not None else ""
        if algorithm in _FONT_ONLY or not uri.lower().endswith(_DOCUMENTS):
            continue
        raise BookError(f"{name} is protected by DRM: its text is encrypted and cannot be read")
