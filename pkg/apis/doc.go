// Package apis is the root of podpilot's API groups; each group lives in a subpackage.
package apis
