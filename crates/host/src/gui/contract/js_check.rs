//! The page reads only fields the contract sends.
